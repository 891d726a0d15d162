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
    prefix_upper_bound,
    queue_stats_of,
    run_of,
    run_pk,
    step_of,
)
from ferry.drivers._refusals import CANCELLABLE, DELETABLE, RETRYABLE, OneRunActions
from ferry.drivers._sqlite.database import Database, snapshot
from ferry.drivers._sqlite.runs import Moved
from ferry.drivers.fan_in import CANCELLED_WITH_PARENT
from ferry.drivers.protocol import (
    CHILDREN_SHOWN,
    JobError,
    JobState,
    OutcomeBucket,
    QueueStats,
    RunChange,
    RunDetail,
    RunFilter,
    RunLatency,
    RunSummary,
)
from ferry.drivers.settle import CANCELLED_BY_OPERATOR


class SqliteIntrospection(OneRunActions):
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
            "after_id": run_pk(f.after_id) if f.after_id is not None else None,
            "key_from": f.key_prefix,
            "key_below": prefix_upper_bound(f.key_prefix) if f.key_prefix is not None else None,
            "error_code": f.error_code,
            "error_text": f.error_text,
            "input_contains": f.input_contains,
            "due_after": f.due_after_ms,
            "has_error": f.has_error,
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

    async def retry_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        queries = self._db.queries
        moved = Moved(woke=True)

        def retry(c: sqlite3.Connection, run: sqlite3.Row, now: int) -> None:
            c.execute(queries["run_retry"], {"id": run["id"], "now": now})
            moved.state_changed(
                c, queries, str(run["id"]), run["parent_id"], run["state"], "queued", now
            )

        changes = await self._act(job_ids, RETRYABLE, retry)
        self._moved(moved if any(change.changed for change in changes) else Moved())
        return changes

    async def cancel_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        """Cancel the runs and their descendants that have not ended
        (``ferry.drivers.fan_in``), in one transaction."""
        queries = self._db.queries
        moved = Moved()

        def cancel(c: sqlite3.Connection, run: sqlite3.Row, now: int) -> None:
            _cancel(c, queries, run["id"], run["state"], run["parent_id"], now, moved)
            descendants = c.execute(queries["run_descendants"], {"id": run["id"]}).fetchall()
            for pk, state, parent_id in descendants:
                _cancel(c, queries, pk, state, parent_id, now, moved, CANCELLED_WITH_PARENT)

        changes = await self._act(job_ids, CANCELLABLE, cancel)
        self._moved(moved)
        return changes

    async def delete_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        queries = self._db.queries

        def delete(c: sqlite3.Connection, run: sqlite3.Row, now: int) -> None:
            c.execute(queries["run_delete"], {"id": run["id"]})

        return await self._act(job_ids, DELETABLE, delete)

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
        job_ids: Sequence[str],
        states: frozenset[JobState],
        change: Callable[[sqlite3.Connection, sqlite3.Row, int], None],
    ) -> list[RunChange]:
        """Run ``change`` on each run (its ``run_state`` row) whose state is one of
        ``states``, all in one transaction under the write lock; answers a change per run
        found."""
        pks = [pk for pk in (run_pk(job_id) for job_id in job_ids) if pk is not None]
        queries = self._db.queries

        def act(c: sqlite3.Connection) -> list[RunChange]:
            now = self._db.clock.now_ms()
            changes = []
            for pk in dict.fromkeys(pks):
                row = c.execute(queries["run_state"], {"id": pk}).fetchone()
                if row is None:
                    continue
                applies = row["state"] in states
                if applies:
                    change(c, row, now)
                changes.append(RunChange(str(pk), row["name"], row["state"], applies))
            return changes

        return await self._db.transaction(act) if pks else []


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
