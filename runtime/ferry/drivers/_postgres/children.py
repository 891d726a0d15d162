"""``ChildRuns`` on Postgres: a parent's fan-out, and its mark before it parks on a wait.

The counting and waking of ``ferry.drivers.fan_in`` are the triggers of migration 0023,
apart from the count a fan-out adds, which ``enqueue_children`` writes in its own
statement.
"""

from __future__ import annotations

from collections.abc import Sequence

from ferry.drivers._columns import json_text, run_pk
from ferry.drivers._postgres.database import Database
from ferry.drivers._postgres.enqueued import resolved
from ferry.drivers._postgres.joined import Row
from ferry.drivers.protocol import (
    EnqueueRequest,
    EnqueueResult,
    ParentRefusal,
    RunFence,
)


class _Refused(Exception):
    def __init__(self, why: ParentRefusal) -> None:
        super().__init__(why)
        self.why: ParentRefusal = why


class PostgresChildren:
    """Children as rows of ``jobs`` naming their ``parent_id``."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def enqueue_children(
        self, parent: RunFence, requests: Sequence[EnqueueRequest]
    ) -> list[EnqueueResult] | ParentRefusal:
        pk = run_pk(parent.job_id)
        if pk is None:
            return "not-held"
        pool = await self._db.pool()
        queries = self._db.queries

        async def write(pending: list[EnqueueRequest]) -> list[Row]:
            batch = json_text([_child_row(r) for r in pending])
            rows = await pool.fetch(
                queries["enqueue_children"], self._db.clock.now_ms(), pk, parent.worker_id, batch
            )
            [fence] = [row for row in rows if row["id"] is None]
            if not fence["held"]:
                raise _Refused("not-held")
            if fence["cancel_requested"]:
                raise _Refused("cancel-requested")
            return [row for row in rows if row["id"] is not None]

        async def existing(keys: list[str]) -> Sequence[Row]:
            return await pool.fetch(queries["enqueue_existing"], keys)

        try:
            return await resolved(requests, write, existing)
        except _Refused as refused:
            return refused.why

    async def await_children(self, parent: RunFence) -> bool:
        pk = run_pk(parent.job_id)
        pool = await self._db.pool()
        if pk is None:
            return False
        held = await pool.fetchval(
            self._db.queries["children_await"], pk, parent.worker_id, self._db.clock.now_ms()
        )
        return held is not None


def _child_row(r: EnqueueRequest) -> dict[str, object]:
    """One child as ``enqueue_children``'s JSON batch carries it (due now: no run_at)."""
    return {
        "name": r.name,
        "queue": r.queue,
        "payload": r.payload,
        "idempotency_key": r.idempotency_key,
        "max_attempts": r.max_attempts,
        "tenant": r.tenant,
        "actor": r.actor,
        "concurrency_key": r.concurrency_key,
        "priority": r.priority,
        "rate_key": r.rate_key,
        "traceparent": r.traceparent,
    }
