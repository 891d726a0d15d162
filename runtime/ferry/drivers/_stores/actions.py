"""An operator's actions that move runs — retry, cancel, delete many runs; resume a
queue — each atomic as its driver can make it, answering a ``RunChange`` per run found.

An action decides on the runs' stored states and changes them with nothing slipping in
between (a worker's claim or settle, a fan-out of a run being cancelled). A SQL driver
runs it as one transaction with Python between statements (``PlannedActions``). Redis has
no such transaction, only scripts, so there each action is one script that also does what
``RunMoves`` does on SQL — the parents' counts, the news of runs ending, the wake
(``ScriptedActions``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from ferry.drivers._columns import Row
from ferry.drivers._refusals import DELETABLE, RETRYABLE
from ferry.drivers._stores.moves import Moved, RunMoves, StateChange
from ferry.drivers._stores.statements import Plan, Statements, Transactional
from ferry.drivers.fan_in import CANCELLED_WITH_PARENT
from ferry.drivers.protocol import JobError, JobState, RunChange
from ferry.drivers.settle import CANCELLED_BY_OPERATOR


class RunActions(Protocol):
    """A driver's atomic form of each operator action (``pks``: run ids, each once)."""

    async def retry(self, pks: list[int], now_ms: int) -> list[RunChange]: ...

    async def cancel(self, pks: list[int], now_ms: int) -> list[RunChange]: ...

    async def delete(self, pks: list[int], now_ms: int) -> list[RunChange]: ...

    async def resume(self, queue: str) -> None:
        """Let claims from ``queue`` proceed again, and wake idle workers for it."""
        ...


class PlannedActions:
    """Each action as one transaction (a SQL driver's ``atomic``). ``run_states`` reads the
    runs and holds them (Postgres: ``FOR UPDATE``; SQLite: the write lock), then each state
    the action applies to gets its statement over the runs in it (a cancel: ``run_cancel``
    for queued and sleeping runs, ``run_cancel_request`` for running ones). A cancel also
    cancels the descendants that have not ended of the runs it changed
    (``ferry.drivers.fan_in``): ``run_descendants`` reads and holds them once the runs are
    held — a fan-out of a held parent waits for that hold, so every child written before
    the cancel is found and none is written after it. What the changes mean beyond the
    rows is the dialect's ``RunMoves`` (a delete too: a child deleted before its end
    counts as ended for its parent)."""

    def __init__(self, statements: Transactional, moves: RunMoves) -> None:
        self._s = statements
        self._moves = moves

    async def retry(self, pks: list[int], now_ms: int) -> list[RunChange]:
        moved = Moved(woke=True)
        retried = self._moving_to("queued", now_ms, moved)
        plan = _acted(pks, dict.fromkeys(RETRYABLE, "run_retry"), retried, {"now": now_ms})
        changes = await self._s.atomic(plan)
        if any(change.changed for change in changes):
            self._moves.committed(moved)
        return changes

    async def cancel(self, pks: list[int], now_ms: int) -> list[RunChange]:
        moved = Moved()

        def with_descendants(acted: Sequence[Row]) -> Plan[None]:
            changes = _cancelled(acted)
            if acted:
                ids = [row["pk"] for row in acted]
                descendants = yield "run_descendants", {"ids": ids}
                yield from _by_state(
                    descendants, _CANCEL, _cancel_parameters(now_ms, CANCELLED_WITH_PARENT)
                )
                changes += _cancelled(descendants)
            yield from self._moves.changed(changes, now_ms, moved)

        parameters = _cancel_parameters(now_ms, CANCELLED_BY_OPERATOR)
        changes = await self._s.atomic(_acted(pks, _CANCEL, with_descendants, parameters))
        self._moves.committed(moved)
        return changes

    async def delete(self, pks: list[int], now_ms: int) -> list[RunChange]:
        moved = Moved()
        deleted = self._moving_to(None, now_ms, moved)
        plan = _acted(pks, dict.fromkeys(DELETABLE, "run_delete"), deleted, {})
        changes = await self._s.atomic(plan)
        self._moves.committed(moved)
        return changes

    async def resume(self, queue: str) -> None:
        await self._s.write("queue_resume", queue=queue)
        self._moves.committed(Moved(woke=True))

    def _moving_to(
        self, after: JobState | None, now: int, moved: Moved
    ) -> Callable[[Sequence[Row]], Plan[None]]:
        """The follow-up of an action that moves every run it acted on to ``after``
        (``None``: deleted): what that means beyond the rows, in the action's transaction."""

        def follow_up(acted: Sequence[Row]) -> Plan[None]:
            changes = [StateChange(r["pk"], r["parent_id"], r["state"], after) for r in acted]
            yield from self._moves.changed(changes, now, moved)

        return follow_up


class ScriptedActions:
    """Each action as one statement that does all of it (Redis: ``runs_retry``,
    ``runs_cancel``, ``runs_delete``, ``queue_resume``, one script each), answering a row
    per run found: its ``id``, ``name``, ``state`` before and whether it ``changed``."""

    def __init__(self, statements: Statements) -> None:
        self._s = statements

    async def retry(self, pks: list[int], now_ms: int) -> list[RunChange]:
        return _changes(await self._s.write("runs_retry", ids=pks, now=now_ms))

    async def cancel(self, pks: list[int], now_ms: int) -> list[RunChange]:
        rows = await self._s.write(
            "runs_cancel",
            ids=pks,
            **_cancel_parameters(now_ms, CANCELLED_BY_OPERATOR),
            parent_code=CANCELLED_WITH_PARENT.code,
            parent_message=CANCELLED_WITH_PARENT.message,
        )
        return _changes(rows)

    async def delete(self, pks: list[int], now_ms: int) -> list[RunChange]:
        return _changes(await self._s.write("runs_delete", ids=pks, now=now_ms))

    async def resume(self, queue: str) -> None:
        await self._s.write("queue_resume", queue=queue)


def _changes(rows: Sequence[Row]) -> list[RunChange]:
    return [RunChange(row["id"], row["name"], row["state"], row["changed"]) for row in rows]


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
