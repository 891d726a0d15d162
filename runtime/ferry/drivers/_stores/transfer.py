"""``RunTransfer`` on every driver: moving runs into and out of one store (``jobs drain``).

Reserve, remove and release are each one statement. An import writes a batch of runs with
their steps atomically, so a worker never claims a moved run without the steps it must
replay — how is the driver's ``ImportBatch``: a SQL store runs a ``Plan`` in one
transaction (``in_one_transaction``: the runs, then their steps, then a judgement of the
keys it skipped); Redis, which has no transaction with Python between its statements, runs
one script (``_redis.transfer``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeAlias

from ferry.drivers._columns import Row, json_text, run_of, run_pk, step_of, stored_columns
from ferry.drivers._stores.statements import Plan, Statements, Transactional
from ferry.drivers._stores.steps import step_parameters
from ferry.drivers._transfer import imported, judged
from ferry.drivers.protocol import ImportResult, MovedRun, StepRecord

ImportBatch: TypeAlias = Callable[
    [list[MovedRun], int], Awaitable[tuple[dict[str, ImportResult], bool]]
]
"""Write a batch of runs (keys distinct) with their steps, atomically, at ``now``: each
key's result, and whether a run came in due now (then ``woke``)."""


class StatementTransfer:
    """Moves runs into and out of one store (see ``RunTransfer``), importing a batch with
    ``batch``; ``woke`` wakes this process's idle workers when runs come back due (SQLite:
    Postgres' and Redis' imports publish the wake themselves)."""

    def __init__(
        self, statements: Statements, woke: Callable[[], None], batch: ImportBatch
    ) -> None:
        self._s = statements
        self._woke = woke
        self._batch = batch

    async def reserve(
        self,
        drain_id: str,
        *,
        target: str,
        limit: int,
        queues: Sequence[str] | None = None,
        include_dead: bool = False,
    ) -> list[MovedRun]:
        """One statement; the steps are read after it (a moving run records none, so the
        two reads cannot disagree)."""
        rows = await self._s.write(
            "transfer_reserve",
            drain_id=drain_id,
            target=target,
            limit=max(limit, 0),
            queues=list(queues) if queues is not None else None,
            include_dead=include_dead,
            now=self._s.clock.now_ms(),
        )
        steps: dict[str, list[StepRecord]] = {row["id"]: [] for row in rows}
        if rows:
            for step in await self._s.read("step_load", job_ids=[int(r["id"]) for r in rows]):
                steps[step["job_id"]].append(step_of(step))
        return [
            run_of(MovedRun, row, state=row["moving_from"], steps=tuple(steps[row["id"]]))
            for row in sorted(rows, key=lambda row: int(row["id"]))
        ]

    async def import_runs(self, runs: Sequence[MovedRun]) -> list[ImportResult]:
        return await imported(runs, self._write)

    async def _write(self, runs: list[MovedRun]) -> dict[str, ImportResult]:
        found, due = await self._batch(runs, self._s.clock.now_ms())
        if due:
            self._woke()
        return found

    async def remove(self, drain_id: str, job_ids: Sequence[str]) -> list[str]:
        return [row["id"] for row in await self._fenced("transfer_remove", drain_id, job_ids)]

    async def release(self, drain_id: str, job_ids: Sequence[str]) -> list[str]:
        rows = await self._fenced("transfer_release", drain_id, job_ids)
        now = self._s.clock.now_ms()
        if any(row["state"] == "queued" and row["run_at_ms"] <= now for row in rows):
            self._woke()
        return [row["id"] for row in rows]

    async def _fenced(self, name: str, drain_id: str, job_ids: Sequence[str]) -> list[Row]:
        pks = [pk for pk in map(run_pk, job_ids) if pk is not None]
        if not pks:
            return []
        rows = await self._s.write(name, drain_id=drain_id, ids=pks, now=self._s.clock.now_ms())
        return sorted(rows, key=lambda row: int(row["id"]))


def in_one_transaction(statements: Transactional) -> ImportBatch:
    """A SQL store's ``ImportBatch``: ``_imported``'s plan, in one transaction."""
    return lambda runs, now: statements.atomic(_imported(runs, now))


def _imported(runs: list[MovedRun], now: int) -> Plan[tuple[dict[str, ImportResult], bool]]:
    """Write ``runs`` (keys distinct) with their steps; answers each key's result, and
    whether a run came in due now. A key that already has a run is skipped and judged; a
    key whose run was deleted between the two statements is free again, and written."""
    found: dict[str, ImportResult] = {}
    due = False
    pending = runs
    while pending:
        rows = yield (
            "transfer_import",
            {"runs": json_text(list(map(stored_columns, pending))), "now": now},
        )
        written = {row["idempotency_key"]: row for row in rows}
        due = due or any(r["state"] == "queued" and r["run_at_ms"] <= now for r in rows)
        steps = [
            {"job_id": int(written[run.idempotency_key]["id"]), **step_parameters(step)}
            for run in pending
            if run.idempotency_key in written
            for step in run.steps
        ]
        if steps:
            yield "transfer_import_steps", {"steps": json_text(steps)}
        found |= {key: ImportResult("imported", row["id"]) for key, row in written.items()}
        skipped = {run.idempotency_key: run for run in pending if run.idempotency_key not in found}
        if skipped:
            for row in (yield "transfer_existing", {"keys": list(skipped)}):
                found[row["idempotency_key"]] = judged(row, skipped[row["idempotency_key"]])
        pending = [run for run in skipped.values() if run.idempotency_key not in found]
    return found, due
