"""``JobIntrospection`` on SQLite: what ``ferry jobs`` and the dashboard read and do.

Reads go through the driver's reader (WAL lets them run beside any writer); an operator's
action reads the run's state and changes it in one ``BEGIN IMMEDIATE`` transaction, so a
worker's claim or settle cannot slip in between.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence

from ferry._names import check_name
from ferry.drivers._columns import (
    latency_of,
    queue_stats_of,
    run_of,
    run_pk,
    step_of,
)
from ferry.drivers._refusals import run_in_wrong_state, run_not_found
from ferry.drivers._sqlite.database import Database, snapshot
from ferry.drivers._sqlite.runs import Moved
from ferry.drivers.fan_in import CANCELLED_WITH_PARENT
from ferry.drivers.protocol import (
    CHILDREN_SHOWN,
    JobError,
    JobState,
    OutcomeBucket,
    QueueStats,
    RunDetail,
    RunFilter,
    RunLatency,
    RunSummary,
)
from ferry.drivers.settle import CANCELLED_BY_OPERATOR


class SqliteIntrospection:
    """Operator reads and actions over ``ferry_jobs``; ``moved`` tells this process what an
    action moved (idle workers wake for a run put back, result waiters hear of an end)."""

    def __init__(self, database: Database, moved: Callable[[Moved], None]) -> None:
        self._db = database
        self._moved = moved

    async def list_runs(self, run_filter: RunFilter) -> Sequence[RunSummary]:
        f = run_filter
        parameters = {
            "queue": f.queue,
            "name": f.name,
            "state": f.state,
            "tenant": f.tenant,
            "created_after": f.created_after_ms,
            "created_before": f.created_before_ms,
            "before_id": int(f.before_id) if f.before_id is not None else None,
            "limit": max(f.limit, 0),
            "lease_expired": f.lease_expired,
            "now": self._db.clock.now_ms(),
        }
        rows = await self._db.fetch("runs_list", parameters)
        return [run_of(RunSummary, row) for row in rows]

    async def get_run(self, job_id: str) -> RunDetail | None:
        pk = run_pk(job_id)
        queries = self._db.queries

        def read(
            c: sqlite3.Connection,
        ) -> tuple[sqlite3.Row | None, list[sqlite3.Row], list[sqlite3.Row]]:
            run = c.execute(queries["run_get"], {"id": pk}).fetchone()
            children = c.execute(
                queries["run_children"], {"id": pk, "limit": CHILDREN_SHOWN}
            ).fetchall()
            return run, c.execute(queries["run_steps"], {"id": pk}).fetchall(), children

        if pk is None:
            await self._db.open()
            return None
        row, steps, children = await self._db.read(lambda c: snapshot(c, read))
        if row is None:
            return None
        return run_of(
            RunDetail,
            row,
            steps=tuple(step_of(step) for step in steps),
            children=tuple(run_of(RunSummary, child) for child in children),
        )

    async def retry_run(self, job_id: str) -> None:
        queries = self._db.queries
        moved = Moved(woke=True)

        def retry(c: sqlite3.Connection, run: sqlite3.Row, now: int) -> None:
            c.execute(queries["run_retry"], {"id": run["id"], "now": now})
            moved.state_changed(c, queries, job_id, run["parent_id"], run["state"], "queued", now)

        await self._act(job_id, "retried", "dead or cancelled", {"dead", "cancelled"}, retry)
        self._moved(moved)

    async def cancel_run(self, job_id: str) -> JobState:
        """Cancel the run and its descendants that have not ended (``ferry.drivers.fan_in``),
        in one transaction."""
        queries = self._db.queries
        moved = Moved()

        def cancel(c: sqlite3.Connection, run: sqlite3.Row, now: int) -> None:
            _cancel(c, queries, run["id"], run["state"], run["parent_id"], now, moved)
            descendants = c.execute(queries["run_descendants"], {"id": run["id"]}).fetchall()
            for pk, state, parent_id in descendants:
                _cancel(c, queries, pk, state, parent_id, now, moved, CANCELLED_WITH_PARENT)

        before = await self._act(
            job_id,
            "cancelled",
            "queued, sleeping or running",
            {"queued", "sleeping", "running"},
            cancel,
        )
        self._moved(moved)
        return "running" if before == "running" else "cancelled"

    async def throughput(self, since_ms: int) -> Mapping[str, int]:
        rows = await self._db.fetch("queue_throughput", {"since": since_ms})
        return {row["queue"]: row["completed"] for row in rows}

    async def outcome_series(self, since_ms: int, bucket_ms: int) -> Sequence[OutcomeBucket]:
        parameters = {"since": since_ms, "bucket": bucket_ms}
        rows = await self._db.fetch("outcome_series", parameters)
        return [
            OutcomeBucket(row["queue"], row["start_ms"], row["completed"], row["dead"])
            for row in rows
        ]

    async def recent_latencies(self, limit: int) -> Sequence[RunLatency]:
        rows = await self._db.fetch("recent_latencies", {"limit": max(limit, 0)})
        return [latency_of(row) for row in rows]

    async def pause_queue(self, queue: str) -> None:
        check_name(queue, what="queue")
        parameters = {"queue": queue, "now": self._db.clock.now_ms()}
        await self._db.execute("queue_pause", parameters)

    async def resume_queue(self, queue: str) -> None:
        check_name(queue, what="queue")
        await self._db.execute("queue_resume", {"queue": queue})
        self._moved(Moved(woke=True))

    async def stats(self) -> list[QueueStats]:
        """Counts per queue and state (every state present), paused queues included."""
        return queue_stats_of(await self._db.fetch("queue_stats", {"now": self._db.clock.now_ms()}))

    async def _act(
        self,
        job_id: str,
        action: str,
        allowed: str,
        states: set[str],
        change: Callable[[sqlite3.Connection, sqlite3.Row, int], None],
    ) -> JobState:
        """Run ``change`` on the run (its ``run_state`` row) if its state is one of
        ``states``, under the write lock; answers the state before it, and refuses a
        missing run or another state."""
        pk = run_pk(job_id)
        queries = self._db.queries

        def act(c: sqlite3.Connection, pk: int) -> tuple[str, JobState] | None:
            row = c.execute(queries["run_state"], {"id": pk}).fetchone()
            if row is None:
                return None
            if row["state"] in states:
                change(c, row, self._db.clock.now_ms())
            return row["name"], row["state"]

        found = await self._db.transaction(lambda c: act(c, pk)) if pk is not None else None
        if found is None:
            raise run_not_found(job_id)
        name, state = found
        if state not in states:
            raise run_in_wrong_state(job_id, name, state, action, allowed)
        return state


def _cancel(
    c: sqlite3.Connection,
    queries: Mapping[str, str],
    pk: int,
    state: JobState,
    parent_id: int | None,
    now: int,
    moved: Moved,
    error: JobError = CANCELLED_BY_OPERATOR,
) -> None:
    """Cancel run ``pk`` (in ``state``, which has not ended): a running one is asked (its
    worker's heartbeat acts on it), a queued or sleeping one ends here, and counts so in
    its parent."""
    if state == "running":
        c.execute(queries["run_cancel_request"], {"id": pk, "now": now})
        return
    c.execute(
        queries["run_cancel"],
        {"id": pk, "now": now, "error_code": error.code, "error_message": error.message},
    )
    moved.state_changed(c, queries, str(pk), parent_id, state, "cancelled", now)
