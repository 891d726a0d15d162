"""``JobIntrospection`` on Postgres: what ``ferry jobs`` and the dashboard read and do."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ferry._names import check_name
from ferry.drivers._columns import latency_of, queue_stats_of, run_of, run_pk
from ferry.drivers._postgres.database import Database
from ferry.drivers._postgres.ledger import Session
from ferry.drivers._refusals import run_in_wrong_state, run_not_found
from ferry.drivers.fan_in import CANCELLED_WITH_PARENT
from ferry.drivers.protocol import (
    CHILDREN_SHOWN,
    JobState,
    OutcomeBucket,
    QueueStats,
    RunDetail,
    RunFilter,
    RunLatency,
    RunSummary,
    StepRecord,
)
from ferry.drivers.settle import CANCELLED_BY_OPERATOR


class PostgresIntrospection:
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

    async def retry_run(self, job_id: str) -> None:
        await self._transition(job_id, "run_retry", "retried", "dead or cancelled")

    async def cancel_run(self, job_id: str) -> JobState:
        """Cancel the run, then its descendants that have not ended, in one transaction of
        two statements: the second one's snapshot sees every child the run enqueued before
        the first one locked it (``run_cancel_descendants.sql``)."""
        pool = await self._db.pool()
        async with pool.acquire() as connection, connection.transaction():
            before = await self._transition(
                job_id,
                "run_cancel",
                "cancelled",
                "queued, sleeping or running",
                connection,
                CANCELLED_BY_OPERATOR.code,
                CANCELLED_BY_OPERATOR.message,
            )
            await connection.fetchval(
                self._db.queries["run_cancel_descendants"],
                run_pk(job_id),
                self._db.clock.now_ms(),
                CANCELLED_WITH_PARENT.code,
                CANCELLED_WITH_PARENT.message,
            )
        return "running" if before == "running" else "cancelled"

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

    async def _transition(
        self,
        job_id: str,
        query: str,
        action: str,
        allowed: str,
        session: Session | None = None,
        *extra: object,
    ) -> JobState:
        """Run a guarded state change (on ``session``, else the pool; ``extra`` parameters
        after the run and now); answers the state before it, and refuses a missing run or
        one in another state."""
        pk = run_pk(job_id)
        on = session if session is not None else await self._db.pool()
        row = (
            await on.fetchrow(self._db.queries[query], pk, self._db.clock.now_ms(), *extra)
            if pk is not None
            else None
        )
        if row is None:
            raise run_not_found(job_id)
        if not row["changed"]:
            raise run_in_wrong_state(job_id, row["name"], row["state"], action, allowed)
        state: JobState = row["state"]
        return state
