"""``StepStore`` over statements: memoized step results beside the run, fenced on its
holder in the statement (Redis: the script) that records them."""

from __future__ import annotations

from collections.abc import Mapping

from ferry.drivers._columns import json_text, step_of
from ferry.drivers._stores.statements import Statements, row_of
from ferry.drivers.protocol import StepRecord


class StatementStepStore:
    """One row per recorded step of a run (the ``steps`` table; Redis: the hash
    ``steps:<run id>``)."""

    def __init__(self, statements: Statements) -> None:
        self._s = statements

    async def load(self, job_id: str) -> Mapping[str, StepRecord]:
        pk = await row_of(self._s, job_id)
        if pk is None:
            return {}
        rows = await self._s.read("step_load", job_ids=[pk])
        return {row["name"]: step_of(row) for row in rows}

    async def record(self, job_id: str, step: StepRecord, *, worker_id: str) -> bool:
        """Record ``step`` if ``worker_id`` still holds the run; answers whether it does
        (a step already recorded is kept: replaying a record is not an error)."""
        pk = await row_of(self._s, job_id)
        if pk is None:
            return False
        held = await self._s.write(
            "step_record",
            job_id=pk,
            worker_id=worker_id,
            now=self._s.clock.now_ms(),
            **step_parameters(step),
        )
        return bool(held)


def step_parameters(step: StepRecord) -> dict[str, object]:
    """A step as the statements' named parameters (``result`` as JSON text)."""
    return {
        "name": step.name,
        "kind": step.kind,
        "result": json_text(step.result),
        "started_at_ms": step.started_at_ms,
        "finished_at_ms": step.finished_at_ms,
        "wake_at_ms": step.wake_at_ms,
    }
