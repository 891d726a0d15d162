"""``StepStore`` on SQLite: memoized step results beside the run, fenced on its holder."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ferry.drivers._columns import run_pk, step_columns, step_of
from ferry.drivers._sqlite.database import Database
from ferry.drivers._sqlite.runs import write_if_held
from ferry.drivers.protocol import StepRecord


class SqliteStepStore:
    """The ``ferry_steps`` table: one row per recorded step of a run."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def load(self, job_id: str) -> Mapping[str, StepRecord]:
        pk = run_pk(job_id)
        if pk is None:
            await self._db.open()
            return {}
        rows = await self._db.fetch("step_load", {"job_id": pk})
        return {row["name"]: step_of(row) for row in rows}

    async def record(self, job_id: str, step: StepRecord, *, worker_id: str) -> bool:
        parameters = step_parameters(run_pk(job_id), step)
        return await write_if_held(self._db, job_id, worker_id, "step_record", parameters)


def step_parameters(job_id: int | None, step: StepRecord) -> dict[str, Any]:
    """One step of run ``job_id`` as ``step_record``'s parameters."""
    name, kind, result, started_at_ms, finished_at_ms, wake_at_ms = step_columns(step)
    return {
        "job_id": job_id,
        "name": name,
        "kind": kind,
        "result": result,
        "started_at_ms": started_at_ms,
        "finished_at_ms": finished_at_ms,
        "wake_at_ms": wake_at_ms,
    }
