"""``RunTransfer`` on Postgres: a batch is reserved, imported or removed in one statement.

Read the statements in ``sql/queries/transfer_*.sql``; the ``moving`` state and its columns
come from migration 0008.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from ferry.drivers._columns import (
    array_columns,
    json_text,
    progress_columns,
    run_of,
    run_pk,
    step_columns,
    step_of,
)
from ferry.drivers._postgres.database import Database
from ferry.drivers._transfer import answer_for
from ferry.drivers.protocol import ImportResult, MovedRun, StepRecord

Connection: TypeAlias = "PoolConnectionProxy[asyncpg.Record]"


class PostgresTransfer:
    """Moves runs into and out of one schema (see ``RunTransfer``)."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def reserve(
        self,
        drain_id: str,
        *,
        target: str,
        limit: int,
        queues: Sequence[str] | None = None,
        include_dead: bool = False,
    ) -> list[MovedRun]:
        pool = await self._db.pool()
        rows = await pool.fetch(
            self._db.queries["transfer_reserve"],
            drain_id,
            target,
            max(limit, 0),
            list(queues) if queues is not None else None,
            include_dead,
            self._db.clock.now_ms(),
        )
        steps: dict[str, list[StepRecord]] = {row["id"]: [] for row in rows}
        if rows:
            pks = [int(row["id"]) for row in rows]
            for step in await pool.fetch(self._db.queries["step_load"], pks):
                steps[step["job_id"]].append(step_of(step))
        return [
            run_of(MovedRun, row, state=row["moving_from"], steps=tuple(steps[row["id"]]))
            for row in rows
        ]

    async def import_runs(self, runs: Sequence[MovedRun]) -> list[ImportResult]:
        if not runs:
            return []
        pool = await self._db.pool()
        firsts: dict[str, MovedRun] = {}
        for run in runs:
            firsts.setdefault(run.idempotency_key, run)
        found: dict[str, ImportResult] = {}
        async with pool.acquire() as connection, connection.transaction():
            pending = list(firsts.values())
            while pending:
                found |= await self._insert(connection, pending)
                skipped = [run for run in pending if run.idempotency_key not in found]
                if skipped:
                    found |= await self._judge(connection, skipped)
                # A key whose run was deleted between the two statements is free again.
                pending = [run for run in skipped if run.idempotency_key not in found]
        return [
            answer_for(found[run.idempotency_key], firsts[run.idempotency_key], run) for run in runs
        ]

    async def remove(self, drain_id: str, job_ids: Sequence[str]) -> list[str]:
        return await self._fenced("transfer_remove", drain_id, job_ids)

    async def release(self, drain_id: str, job_ids: Sequence[str]) -> list[str]:
        return await self._fenced("transfer_release", drain_id, job_ids, self._db.clock.now_ms())

    async def _fenced(
        self, query: str, drain_id: str, job_ids: Sequence[str], *extra: object
    ) -> list[str]:
        pool = await self._db.pool()
        pks = [pk for pk in map(run_pk, job_ids) if pk is not None]
        if not pks:
            return []
        rows = await pool.fetch(self._db.queries[query], drain_id, pks, *extra)
        return [row["id"] for row in rows]

    async def _insert(
        self, connection: Connection, runs: Sequence[MovedRun]
    ) -> dict[str, ImportResult]:
        steps = [(run.idempotency_key, step) for run in runs for step in run.steps]
        rows = await connection.fetch(
            self._db.queries["transfer_import"],
            *array_columns(map(_run_row, runs)),
            *(array_columns((key, *step_columns(step)) for key, step in steps) or [[]] * 7),
            self._db.clock.now_ms(),
        )
        return {row["idempotency_key"]: ImportResult("imported", row["id"]) for row in rows}

    async def _judge(
        self, connection: Connection, runs: Sequence[MovedRun]
    ) -> dict[str, ImportResult]:
        rows = await connection.fetch(
            self._db.queries["transfer_existing"],
            *array_columns(
                (r.idempotency_key, r.name, r.queue, json_text(r.payload), r.created_at_ms)
                for r in runs
            ),
        )
        return {
            row["idempotency_key"]: ImportResult(
                "present" if row["same"] else "collision", row["id"]
            )
            for row in rows
        }


def _run_row(run: MovedRun) -> tuple[Any, ...]:
    """One run as ``transfer_import``'s array elements, in parameter order."""
    error = run.last_error
    return (
        run.name,
        run.queue,
        json_text(run.payload),
        run.idempotency_key,
        run.state,
        run.attempts,
        run.max_attempts,
        run.priority,
        run.run_at_ms,
        run.tenant,
        run.actor,
        run.concurrency_key,
        error.code if error is not None else None,
        error.message if error is not None else None,
        *progress_columns(run.progress),
        run.created_at_ms,
        run.finished_at_ms,
    )
