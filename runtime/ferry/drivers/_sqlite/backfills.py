"""``BackfillLedger`` on SQLite: one checkpoint row per backfill, fenced on its run."""

from __future__ import annotations

from ferry.drivers._columns import checkpoint_of, json_text, run_pk
from ferry.drivers._sqlite.database import Database
from ferry.drivers._sqlite.runs import write_if_held
from ferry.drivers.protocol import BackfillCheckpoint


class SqliteBackfillLedger:
    """The ``ferry_backfills`` table."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def load(self, key: str) -> BackfillCheckpoint | None:
        rows = await self._db.fetch("backfill_load", {"key": key})
        if not rows:
            return None
        [row] = rows
        return checkpoint_of(row)

    async def save(self, checkpoint: BackfillCheckpoint, *, job_id: str, worker_id: str) -> bool:
        parameters = {
            "key": checkpoint.key,
            "cursor": json_text(checkpoint.cursor),
            "processed": checkpoint.processed,
            "pages": checkpoint.pages,
            "done": checkpoint.done,
            "job_id": run_pk(job_id),
            "updated_at_ms": checkpoint.updated_at_ms,
        }
        return await write_if_held(self._db, job_id, worker_id, "backfill_save", parameters)
