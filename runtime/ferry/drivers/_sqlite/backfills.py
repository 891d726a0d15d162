"""``BackfillLedger`` on SQLite: one checkpoint row per backfill, fenced on its run."""

from __future__ import annotations

import sqlite3

from ferry.drivers._columns import from_json_text, json_text, run_pk
from ferry.drivers._sqlite.database import Database
from ferry.drivers._sqlite.runs import held
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
        return BackfillCheckpoint(
            key=row["key"],
            cursor=from_json_text(row["cursor"]),
            processed=row["processed"],
            pages=row["pages"],
            done=bool(row["done"]),
            updated_at_ms=row["updated_at_ms"],
        )

    async def save(self, checkpoint: BackfillCheckpoint, *, job_id: str, worker_id: str) -> bool:
        queries = self._db.queries

        def save(c: sqlite3.Connection) -> bool:
            if held(c, queries, job_id, worker_id, self._db.clock.now_ms()) is None:
                return False
            c.execute(
                queries["backfill_save"],
                {
                    "key": checkpoint.key,
                    "cursor": json_text(checkpoint.cursor),
                    "processed": checkpoint.processed,
                    "pages": checkpoint.pages,
                    "done": checkpoint.done,
                    "job_id": run_pk(job_id),
                    "updated_at_ms": checkpoint.updated_at_ms,
                },
            )
            return True

        return await self._db.transaction(save)
