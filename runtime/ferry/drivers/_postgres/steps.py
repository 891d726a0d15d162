"""``StepStore`` on Postgres: memoized step results beside the run, fenced on its holder."""

from __future__ import annotations

from collections.abc import Mapping

from ferry.drivers._columns import run_pk, step_columns, step_of
from ferry.drivers._postgres.database import Database
from ferry.drivers.protocol import StepRecord


class PostgresStepStore:
    """The ``steps`` table: one row per recorded step of a run."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def load(self, job_id: str) -> Mapping[str, StepRecord]:
        pk = run_pk(job_id)
        pool = await self._db.pool()
        if pk is None:
            return {}
        rows = await pool.fetch(self._db.queries["step_load"], [pk])
        return {row["name"]: step_of(row) for row in rows}

    async def record(self, job_id: str, step: StepRecord, *, worker_id: str) -> bool:
        pk = run_pk(job_id)
        pool = await self._db.pool()
        if pk is None:
            return False
        held: bool = await pool.fetchval(
            self._db.queries["step_record"],
            pk,
            worker_id,
            self._db.clock.now_ms(),
            *step_columns(step),
        )
        return held
