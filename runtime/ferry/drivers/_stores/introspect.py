"""``JobIntrospection`` written once: what ``ferry jobs``, the dashboard and MCP read and
do, over a driver's statements (the SQL drivers' text, Redis' scripts).

A listing is ``runs_list``. On SQL it is one query: a backward walk of the primary key
that stops after ``limit`` matches. Redis walks the smallest index its filter allows, in
script steps of a bounded number of runs, never every run: its answer ends with a row that
has no id, where its walk stopped (``walked_to``), and the store goes on from there until
the page is full or the walk ran out; a SQL statement answers no such row, so it is called
once. An operator's action on many runs is atomic on each driver in its own way
(``ferry.drivers._stores.actions``)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence

from ferry._names import check_name
from ferry.drivers._columns import (
    latency_of,
    prefix_upper_bound,
    queue_stats_of,
    run_of,
    run_pk,
    step_of,
)
from ferry.drivers._containment import contains
from ferry.drivers._refusals import OneRunActions
from ferry.drivers._stores.actions import RunActions
from ferry.drivers._stores.statements import Statements, row_of
from ferry.drivers.protocol import (
    CHILDREN_SHOWN,
    OutcomeBucket,
    QueueStats,
    RunChange,
    RunDetail,
    RunFilter,
    RunLatency,
    RunSummary,
)


class StatementIntrospection(OneRunActions):
    """Operator reads over the runs' statements; ``actions`` applies the operator's actions
    atomically, as the driver can (a SQL transaction, a Redis script)."""

    def __init__(self, statements: Statements, actions: RunActions) -> None:
        self._s = statements
        self._actions = actions

    async def list_runs(self, run_filter: RunFilter) -> Sequence[RunSummary]:
        f = run_filter
        limit = max(f.limit, 0)
        # What every step of a walk asks alike (one listing, judged at one instant); a step
        # differs only in where it starts and how many matches it still wants.
        filters = {
            "queue": f.queue,
            "name": f.name,
            "state": f.state,
            "tenant": f.tenant,
            "created_after": f.created_after_ms,
            "created_before": f.created_before_ms,
            "lease_expired": f.lease_expired,
            "now": self._s.clock.now_ms(),
            "after_id": run_pk(f.after_id) if f.after_id is not None else None,
            "key_from": f.key_prefix,
            "key_below": prefix_upper_bound(f.key_prefix) if f.key_prefix is not None else None,
            "error_code": f.error_code,
            "error_text": f.error_text,
            "input_contains": f.input_contains,
            "due_after": f.due_after_ms,
            "has_error": f.has_error,
        }
        runs: list[RunSummary] = []
        below = int(f.before_id) if f.before_id is not None else None
        while True:
            rows = await self._s.read(
                "runs_list", **filters, before_id=below, limit=limit - len(runs)
            )
            step = rows[-1] if rows and rows[-1]["id"] is None else None
            if step is None:
                return runs + [run_of(RunSummary, row) for row in rows]
            matches = rows[:-1]
            if f.input_contains is not None:  # a stepped walk leaves the input search here
                wanted = json.loads(f.input_contains)
                matches = [row for row in matches if contains(json.loads(row["input"]), wanted)]
            runs += [run_of(RunSummary, row) for row in matches[: limit - len(runs)]]
            below = step["walked_to"]
            if below is None or len(runs) == limit:
                return runs

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
        return await self._act(self._actions.retry, job_ids)

    async def cancel_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        """A queued or sleeping run ends cancelled at once; a running one gets the request
        recorded, and its worker's heartbeat acts on it. Its descendants that have not
        ended are cancelled with it, alike."""
        return await self._act(self._actions.cancel, job_ids)

    async def delete_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        """Runs no worker or drain holds go, with their steps (running and moving stay).
        A deleted child that had not ended counts as its end for its parent, atomically
        with the delete (``ferry.drivers.fan_in``): a parent waiting for it wakes when it
        was the last, and its wait reads the child as ``X_RUN_NOT_FOUND``."""
        return await self._act(self._actions.delete, job_ids)

    async def _act(
        self,
        action: Callable[[list[int], int], Awaitable[list[RunChange]]],
        job_ids: Sequence[str],
    ) -> list[RunChange]:
        """``action`` over the runs ``job_ids`` name, each once, by id."""
        pks = sorted({pk for pk in map(run_pk, job_ids) if pk is not None})
        if not pks:
            await self._s.open()
            return []
        return await action(pks, self._s.clock.now_ms())

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
        await self._actions.resume(queue)

    async def stats(self) -> list[QueueStats]:
        """Counts per queue and state (every state present), paused queues included."""
        return queue_stats_of(await self._s.read("queue_stats", now=self._s.clock.now_ms()))
