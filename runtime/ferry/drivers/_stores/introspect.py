"""``JobIntrospection`` on a SQL driver: what ``ferry jobs``, the dashboard and MCP read
and do.

An operator's action on many runs is one transaction: ``run_states`` reads the runs and
holds them (Postgres: ``FOR UPDATE``; SQLite: the write lock), then each state the action
applies to gets its statement over the runs in it (a cancel: ``run_cancel`` for queued
and sleeping runs, ``run_cancel_request`` for running ones), so a worker's claim or
settle cannot slip in between. Every run found is answered, changed or not.

A cancel also cancels the descendants of the runs it changed that have not ended
(``ferry.drivers.fan_in``): ``run_descendants`` reads and holds them after the runs
themselves are held — a fan-out of a held parent waits for that hold, so every child
written before the cancel is found and none is written after it — and each is cancelled
as its parent was. What the changes mean beyond the rows (the parents' counts, news for
result waiters) is the dialect's ``RunMoves``; a delete is such a change too (a child
deleted before its end counts as ended for its parent).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from ferry._names import check_name
from ferry.drivers._columns import (
    Row,
    latency_of,
    prefix_upper_bound,
    queue_stats_of,
    run_of,
    run_pk,
    step_of,
)
from ferry.drivers._refusals import DELETABLE, RETRYABLE, OneRunActions
from ferry.drivers._stores.moves import Moved, RunMoves, StateChange
from ferry.drivers._stores.statements import Plan, Transactional, row_of
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


class SqlIntrospection(OneRunActions):
    """Operator reads and actions over the ``jobs`` table; ``moves`` follows the runs an
    action moved (a run put back due, a run ended, a parent's count)."""

    def __init__(self, statements: Transactional, moves: RunMoves) -> None:
        self._s = statements
        self._moves = moves

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
            after_id=run_pk(f.after_id) if f.after_id is not None else None,
            key_from=f.key_prefix,
            key_below=prefix_upper_bound(f.key_prefix) if f.key_prefix is not None else None,
            error_code=f.error_code,
            error_text=f.error_text,
            input_contains=f.input_contains,
            due_after=f.due_after_ms,
            has_error=f.has_error,
        )
        return [run_of(RunSummary, row) for row in rows]

    async def get_run(self, job_id: str) -> RunDetail | None:
        pk = await row_of(self._s, job_id)
        if pk is None:
            return None
        rows = await self._s.read("run_get", id=pk)
        if not rows:
            return None
        steps = tuple(step_of(step) for step in json.loads(rows[0]["steps"]))
        children = (
            await self._s.read("run_children", id=pk, limit=CHILDREN_SHOWN)
            if rows[0]["children_count"]
            else []
        )
        return run_of(
            RunDetail,
            rows[0],
            steps=steps,
            children=tuple(run_of(RunSummary, child) for child in children),
        )

    async def retry_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        """A dead or cancelled run is queued again, due now (a child of a parent counts as
        pending in it again)."""
        now = self._s.clock.now_ms()
        moved = Moved(woke=True)
        retried = self._moving_to("queued", now, moved)
        changes = await self._act(job_ids, dict.fromkeys(RETRYABLE, "run_retry"), retried, now=now)
        if any(change.changed for change in changes):
            self._moves.committed(moved)
        return changes

    async def cancel_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        """A queued or sleeping run ends cancelled at once; a running one gets the request
        recorded, and its worker's heartbeat acts on it. Its descendants that have not
        ended are cancelled with it, alike."""
        now = self._s.clock.now_ms()
        moved = Moved()

        def with_descendants(acted: Sequence[Row]) -> Plan[None]:
            changes = _cancelled(acted)
            if acted:
                ids = [row["pk"] for row in acted]
                descendants = yield "run_descendants", {"ids": ids}
                yield from _by_state(
                    descendants, _CANCEL, _cancel_parameters(now, CANCELLED_WITH_PARENT)
                )
                changes += _cancelled(descendants)
            yield from self._moves.changed(changes, now, moved)

        changes = await self._act(
            job_ids, _CANCEL, with_descendants, **_cancel_parameters(now, CANCELLED_BY_OPERATOR)
        )
        self._moves.committed(moved)
        return changes

    async def delete_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        """Runs no worker or drain holds go, with their steps (running and moving stay).
        A deleted child that had not ended counts as its end for its parent, in the same
        transaction (``ferry.drivers.fan_in``; the dialect's ``RunMoves``, on Postgres the
        delete's trigger): a parent waiting for it wakes when it was the last, and its wait
        reads the child as ``X_RUN_NOT_FOUND``."""
        moved = Moved()
        deleted = self._moving_to(None, self._s.clock.now_ms(), moved)
        changes = await self._act(job_ids, dict.fromkeys(DELETABLE, "run_delete"), deleted)
        self._moves.committed(moved)
        return changes

    def _moving_to(
        self, after: JobState | None, now: int, moved: Moved
    ) -> Callable[[Sequence[Row]], Plan[None]]:
        """The follow-up of an action that moves every run it acted on to ``after``
        (``None``: deleted): what that means beyond the rows, in the action's transaction."""

        def follow_up(acted: Sequence[Row]) -> Plan[None]:
            changes = [StateChange(r["pk"], r["parent_id"], r["state"], after) for r in acted]
            yield from self._moves.changed(changes, now, moved)

        return follow_up

    async def _act(
        self,
        job_ids: Sequence[str],
        statements: dict[JobState, str],
        then: Callable[[Sequence[Row]], Plan[None]],
        **parameters: object,
    ) -> list[RunChange]:
        pks = list(dict.fromkeys(pk for pk in map(run_pk, job_ids) if pk is not None))
        if not pks:
            await self._s.open()
            return []
        return await self._s.atomic(_acted(pks, statements, then, parameters))

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
        self._moves.committed(Moved(woke=True))

    async def stats(self) -> list[QueueStats]:
        """Counts per queue and state (every state present), paused queues included."""
        return queue_stats_of(await self._s.read("queue_stats", now=self._s.clock.now_ms()))


_CANCEL: dict[JobState, str] = {
    "queued": "run_cancel",
    "sleeping": "run_cancel",
    "running": "run_cancel_request",
}
"""A cancel's statement per state it applies to."""


def _cancel_parameters(now: int, error: JobError) -> dict[str, object]:
    return {"now": now, "error_code": error.code, "error_message": error.message}


def _cancelled(rows: Sequence[Row]) -> list[StateChange]:
    """The runs of ``rows`` a cancel ended (a running one is only asked)."""
    return [
        StateChange(row["pk"], row["parent_id"], row["state"], "cancelled")
        for row in rows
        if row["state"] != "running"
    ]


def _acted(
    pks: list[int],
    statements: dict[JobState, str],
    then: Callable[[Sequence[Row]], Plan[None]],
    parameters: dict[str, object],
) -> Plan[list[RunChange]]:
    """Read and hold the runs of ``pks``, run each state's statement (``statements``) over
    the runs in that state, then ``then`` over the runs acted on; answers a change per run
    found."""
    rows = yield "run_states", {"ids": pks}
    acted = [row for row in rows if row["state"] in statements]
    yield from _by_state(acted, statements, parameters)
    yield from then(acted)
    return [
        RunChange(str(row["pk"]), row["name"], row["state"], row["state"] in statements)
        for row in rows
    ]


def _by_state(
    rows: Sequence[Row], statements: dict[JobState, str], parameters: Mapping[str, object]
) -> Plan[None]:
    """Each state's statement over the runs of ``rows`` in it (ids ``pk``)."""
    by_statement: dict[str, list[int]] = {}
    for row in rows:
        if row["state"] in statements:
            by_statement.setdefault(statements[row["state"]], []).append(row["pk"])
    for statement, ids in by_statement.items():
        yield statement, {"ids": ids, **parameters}
