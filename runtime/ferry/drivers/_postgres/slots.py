"""``SlotStore`` on Postgres: fleet-wide concurrency slots as rows, never process memory."""

from __future__ import annotations

from collections.abc import Sequence

from ferry.drivers._postgres.database import Database

_EXTRA_ROUNDS = 8
"""Tries beyond ``limit`` before a key whose free slots keep going to others reports busy.

Each lost round means another holder took a slot, so ``limit`` lost rounds fill the key;
only slots freed and retaken meanwhile need the extra rounds.
"""


class PostgresSlotStore:
    """The ``lease_slots`` table: at most ``limit`` unexpired rows per key."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def acquire(self, key: str, *, holder: str, limit: int, ttl_ms: int) -> bool:
        pool = await self._db.pool()
        for _ in range(limit + _EXTRA_ROUNDS):
            now = self._db.clock.now_ms()
            row = await pool.fetchrow(
                self._db.queries["slot_acquire"], key, holder, limit, now, now + ttl_ms
            )
            assert row is not None
            if not row["contended"]:
                return bool(row["acquired"])
        return False

    async def release(self, key: str, *, holder: str) -> None:
        pool = await self._db.pool()
        await pool.execute(self._db.queries["slot_release"], key, holder)

    async def holders(self, key: str) -> Sequence[str]:
        pool = await self._db.pool()
        rows = await pool.fetch(self._db.queries["slot_holders"], key, self._db.clock.now_ms())
        return [row["holder"] for row in rows]
