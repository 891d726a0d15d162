"""``BackfillLedger`` on Postgres: one checkpoint row per backfill, fenced on its run."""

from __future__ import annotations

from ferry.drivers._columns import checkpoint_of, json_text, run_pk
from ferry.drivers._postgres.database import Database
from ferry.drivers.protocol import BackfillCheckpoint


class PostgresBackfillLedger:
    """The ``backfills`` table."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def load(self, key: str) -> BackfillCheckpoint | None:
        pool = await self._db.pool()
        row = await pool.fetchrow(self._db.queries["backfill_load"], key)
        if row is None:
            return None
        return checkpoint_of(row)

    async def save(self, checkpoint: BackfillCheckpoint, *, job_id: str, worker_id: str) -> bool:
        pk = run_pk(job_id)
        pool = await self._db.pool()
        if pk is None:
            return False
        held: bool = await pool.fetchval(
            self._db.queries["backfill_save"],
            pk,
            worker_id,
            checkpoint.updated_at_ms,
            checkpoint.key,
            json_text(checkpoint.cursor),
            checkpoint.processed,
            checkpoint.pages,
            checkpoint.done,
        )
        return held
