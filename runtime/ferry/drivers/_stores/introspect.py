"""``JobIntrospection`` on a SQL driver: what ``ferry jobs``, the dashboard and MCP read
and do.

An operator's action is one guarded statement per outcome (``run_retry`` changes only a
dead or cancelled run, ``run_cancel`` only a queued or sleeping one): the row is
re-checked as it is written, so a worker's claim or settle cannot slip in between. When
no statement changed the run, ``run_state`` says why (missing, or in another state).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from ferry._names import check_name
from ferry.drivers._columns import latency_of, queue_stats_of, run_of, run_pk, step_of
from ferry.drivers._refusals import run_in_wrong_state, run_not_found
from ferry.drivers._stores.statements import Statements
from ferry.drivers.protocol import (
    JobState,
    OutcomeBucket,
    QueueStats,
    RunDetail,
    RunFilter,
    RunLatency,
    RunSummary,
)
from ferry.drivers.settle import CANCELLED_BY_OPERATOR
from ferry.errors import FerryError


class SqlIntrospection:
    """Operator reads and actions over the ``jobs`` table; ``woke`` wakes this process's
    idle workers when an action puts a run back (Postgres: the statement notifies)."""

    def __init__(self, statements: Statements, woke: Callable[[], None]) -> None:
        self._s = statements
        self._woke = woke

    async def list_runs(self, run_filter: RunFilter) -> Sequence[RunSummary]:
        f = run_filter
        rows = await self._s.read(
            "runs_list",
            queue=f.queue,
            name=f.name,
            state=f.state,
            tenant=f.tenant,
            created_after=f.created_after_ms,
            created_before=f.created_before_ms,
            before_id=int(f.before_id) if f.before_id is not None else None,
            limit=max(f.limit, 0),
            lease_expired=f.lease_expired,
            now=self._s.clock.now_ms(),
        )
        return [run_of(RunSummary, row) for row in rows]

    async def get_run(self, job_id: str) -> RunDetail | None:
        pk = run_pk(job_id)
        if pk is None:
            await self._s.open()
            return None
        rows = await self._s.read("run_get", id=pk)
        if not rows:
            return None
        steps = tuple(step_of(step) for step in json.loads(rows[0]["steps"]))
        return run_of(RunDetail, rows[0], steps=steps)

    async def retry_run(self, job_id: str) -> None:
        pk = run_pk(job_id)
        if pk is None or not await self._s.write("run_retry", id=pk, now=self._s.clock.now_ms()):
            raise await self._refusal(job_id, pk, "retried", "dead or cancelled")
        self._woke()

    async def cancel_run(self, job_id: str) -> JobState:
        """A queued or sleeping run ends cancelled at once; a running one gets the request
        recorded, and its worker's heartbeat acts on it (answers ``running``)."""
        pk = run_pk(job_id)
        if pk is not None:
            now = self._s.clock.now_ms()
            error = CANCELLED_BY_OPERATOR
            if await self._s.write(
                "run_cancel", id=pk, now=now, error_code=error.code, error_message=error.message
            ):
                return "cancelled"
            if await self._s.write("run_cancel_request", id=pk, now=now):
                return "running"
        raise await self._refusal(job_id, pk, "cancelled", "queued, sleeping or running")

    async def throughput(self, since_ms: int) -> Mapping[str, int]:
        rows = await self._s.read("queue_throughput", since=since_ms)
        return {row["queue"]: row["completed"] for row in rows}

    async def outcome_series(self, since_ms: int, bucket_ms: int) -> Sequence[OutcomeBucket]:
        rows = await self._s.read("outcome_series", since=since_ms, bucket=bucket_ms)
        return [
            OutcomeBucket(row["queue"], row["start_ms"], row["completed"], row["dead"])
            for row in rows
        ]

    async def recent_latencies(self, limit: int) -> Sequence[RunLatency]:
        rows = await self._s.read("recent_latencies", limit=max(limit, 0))
        return [latency_of(row) for row in rows]

    async def pause_queue(self, queue: str) -> None:
        check_name(queue, what="queue")
        await self._s.write("queue_pause", queue=queue, now=self._s.clock.now_ms())

    async def resume_queue(self, queue: str) -> None:
        check_name(queue, what="queue")
        await self._s.write("queue_resume", queue=queue)
        self._woke()

    async def stats(self) -> list[QueueStats]:
        """Counts per queue and state (every state present), paused queues included."""
        return queue_stats_of(await self._s.read("queue_stats", now=self._s.clock.now_ms()))

    async def _refusal(self, job_id: str, pk: int | None, action: str, allowed: str) -> FerryError:
        """Why an action changed nothing: the run is missing, or in a state it refuses."""
        rows = await self._s.read("run_state", id=pk) if pk is not None else []
        if not rows:
            return run_not_found(job_id)
        return run_in_wrong_state(job_id, rows[0]["name"], rows[0]["state"], action, allowed)
