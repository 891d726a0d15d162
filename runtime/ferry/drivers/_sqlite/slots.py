"""``SlotStore`` on SQLite: concurrency slots shared by every process on the file.

"At most ``limit`` holders per key" holds across processes because every acquire counts
the live holders and inserts its own row inside one ``BEGIN IMMEDIATE`` transaction: the
file's write lock admits one such transaction at a time, fleet-wide on the host.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ferry.drivers._sqlite.database import Database


class SqliteSlotStore:
    """The ``ferry_lease_slots`` table: at most ``limit`` unexpired rows per key."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def acquire(self, key: str, *, holder: str, limit: int, ttl_ms: int) -> bool:
        queries = self._db.queries

        def acquire(c: sqlite3.Connection) -> bool:
            now = self._db.clock.now_ms()
            live = [r["holder"] for r in c.execute(queries["slot_live"], {"key": key, "now": now})]
            # Re-acquiring is idempotent (it extends); counting every live holder, not only
            # those under the limit, keeps a lowered limit.
            if holder not in live and len(live) >= limit:
                return False
            c.execute(
                queries["slot_take"], {"key": key, "holder": holder, "expires_at_ms": now + ttl_ms}
            )
            return True

        return await self._db.transaction(acquire)

    async def release(self, key: str, *, holder: str) -> None:
        await self._db.execute("slot_release", {"key": key, "holder": holder})

    async def holders(self, key: str) -> Sequence[str]:
        rows = await self._db.fetch("slot_live", {"key": key, "now": self._db.clock.now_ms()})
        return [row["holder"] for row in rows]
