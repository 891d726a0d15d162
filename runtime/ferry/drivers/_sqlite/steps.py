"""``StepStore`` on SQLite: memoized step results beside the run, fenced on its holder."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from ferry.drivers._columns import from_json_text, json_text, run_pk
from ferry.drivers._sqlite.database import Database
from ferry.drivers._sqlite.runs import held
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
        queries = self._db.queries

        def record(c: sqlite3.Connection) -> bool:
            if held(c, queries, job_id, worker_id, self._db.clock.now_ms()) is None:
                return False
            c.execute(
                queries["step_record"],
                {
                    "job_id": run_pk(job_id),
                    "name": step.name,
                    "kind": step.kind,
                    "result": json_text(step.result),
                    "started_at_ms": step.started_at_ms,
                    "finished_at_ms": step.finished_at_ms,
                    "wake_at_ms": step.wake_at_ms,
                },
            )
            return True

        return await self._db.transaction(record)


def step_of(row: sqlite3.Row) -> StepRecord:
    """A ``ferry_steps`` row as the step it records."""
    return StepRecord(
        name=row["name"],
        kind=row["kind"],
        result=from_json_text(row["result"]),
        started_at_ms=row["started_at_ms"],
        finished_at_ms=row["finished_at_ms"],
        wake_at_ms=row["wake_at_ms"],
    )
