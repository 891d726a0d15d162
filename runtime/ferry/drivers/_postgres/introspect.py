"""``JobIntrospection`` on Postgres: what ``ferry jobs`` and the dashboard read and do."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ferry._names import check_name
from ferry.drivers._columns import (
    latency_of,
    prefix_upper_bound,
    queue_stats_of,
    run_of,
    run_pk,
)
from ferry.drivers._postgres.database import Database
from ferry.drivers._postgres.joined import Row
from ferry.drivers._refusals import OneRunActions
from ferry.drivers.fan_in import CANCELLED_WITH_PARENT
from ferry.drivers.protocol import (
    CHILDREN_SHOWN,
    OutcomeBucket,
    QueueStats,
    RunChange,
    RunDetail,
    RunFilter,
    RunLatency,
    RunSummary,
    StepRecord,
)
from ferry.drivers.settle import CANCELLED_BY_OPERATOR


class PostgresIntrospection(OneRunActions):
    """Operator reads and actions over the ``jobs`` table."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def list_runs(self, run_filter: RunFilter) -> Sequence[RunSummary]:
        f = run_filter
        pool = await self._db.pool()
        rows = await pool.fetch(
            self._db.queries["runs_list"],
            f.queue,
            f.name,
            f.state,
            f.tenant,
            f.created_after_ms,
            f.created_before_ms,
            int(f.before_id) if f.before_id is not None else None,
            max(f.limit, 0),
            f.lease_expired,
            self._db.clock.now_ms(),
            run_pk(f.after_id) if f.after_id is not None else None,
            f.key_prefix,
            prefix_upper_bound(f.key_prefix) if f.key_prefix is not None else None,
            f.error_code,
            f.error_text,
            f.input_contains,
            f.due_after_ms,
            f.has_error,
        )
        return [run_of(RunSummary, row) for row in rows]

    async def get_run(self, job_id: str) -> RunDetail | None:
        pk = run_pk(job_id)
        pool = await self._db.pool()
        row = await pool.fetchrow(self._db.queries["run_get"], pk) if pk is not None else None
        if row is None:
            return None
        steps = [StepRecord(**step) for step in json.loads(row["steps"])]
        children = (
            await pool.fetch(self._db.queries["run_children"], pk, CHILDREN_SHOWN)
            if row["children_count"]
            else []
        )
        return run_of(
            RunDetail,
            row,
            steps=tuple(steps),
            children=tuple(run_of(RunSummary, child) for child in children),
        )

    async def retry_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        return await self._change("run_retry", job_ids, self._db.clock.now_ms())

    async def cancel_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        """Cancel the runs, then the descendants of those it changed that have not ended,
        in one transaction of two statements: the second one's snapshot sees every child a
        run enqueued before the first one locked it (``run_cancel_descendants.sql``)."""
        pks = [pk for pk in (run_pk(job_id) for job_id in job_ids) if pk is not None]
        if not pks:
            return []
        now = self._db.clock.now_ms()
        queries = self._db.queries
        pool = await self._db.pool()
        async with pool.acquire() as connection, connection.transaction():
            rows = await connection.fetch(
                queries["run_cancel"],
                pks,
                now,
                CANCELLED_BY_OPERATOR.code,
                CANCELLED_BY_OPERATOR.message,
            )
            changes = [_change_of(row) for row in rows]
            parents = [int(change.id) for change in changes if change.changed]
            if parents:
                await connection.fetchval(
                    queries["run_cancel_descendants"],
                    parents,
                    now,
                    CANCELLED_WITH_PARENT.code,
                    CANCELLED_WITH_PARENT.message,
                )
        return changes

    async def delete_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        return await self._change("run_delete", job_ids)

    async def throughput(self, since_ms: int) -> Mapping[str, int]:
        pool = await self._db.pool()
        rows = await pool.fetch(self._db.queries["queue_throughput"], since_ms)
        return {row["queue"]: row["completed"] for row in rows}

    async def outcome_series(self, since_ms: int, bucket_ms: int) -> Sequence[OutcomeBucket]:
        pool = await self._db.pool()
        rows = await pool.fetch(self._db.queries["outcome_series"], since_ms, bucket_ms)
        return [
            OutcomeBucket(row["queue"], row["start_ms"], row["completed"], row["dead"])
            for row in rows
        ]

    async def recent_latencies(self, limit: int) -> Sequence[RunLatency]:
        pool = await self._db.pool()
        rows = await pool.fetch(self._db.queries["recent_latencies"], max(limit, 0))
        return [latency_of(row) for row in rows]

    async def server_now_ms(self) -> int:
        """The database server's wall clock, in epoch ms (for the clock-skew check)."""
        pool = await self._db.pool()
        now: int = await pool.fetchval(self._db.queries["server_clock"])
        return now

    async def pause_queue(self, queue: str) -> None:
        check_name(queue, what="queue")
        pool = await self._db.pool()
        await pool.execute(self._db.queries["queue_pause"], queue, self._db.clock.now_ms())

    async def resume_queue(self, queue: str) -> None:
        check_name(queue, what="queue")
        pool = await self._db.pool()
        await pool.execute(self._db.queries["queue_resume"], queue)

    async def stats(self) -> list[QueueStats]:
        """Counts per queue and state (every state present), paused queues included."""
        pool = await self._db.pool()
        return queue_stats_of(
            await pool.fetch(self._db.queries["queue_stats"], self._db.clock.now_ms())
        )

    async def _change(self, query: str, job_ids: Sequence[str], *more: object) -> list[RunChange]:
        """Run a guarded many-run action; answers a change per run found."""
        pks = [pk for pk in (run_pk(job_id) for job_id in job_ids) if pk is not None]
        if not pks:
            return []
        pool = await self._db.pool()
        rows = await pool.fetch(self._db.queries[query], pks, *more)
        return [_change_of(row) for row in rows]


def _change_of(row: Row) -> RunChange:
    """A many-run action's answer for one run."""
    return RunChange(row["id"], row["name"], row["state"], row["changed"])
