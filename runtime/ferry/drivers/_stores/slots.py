"""``SlotStore`` over statements: fleet-wide concurrency slots as rows (Redis: sorted
sets), never process memory.

"At most ``limit`` holders per key" holds across processes because the statement that
counts a key's live holders is the one that writes the new holder (Postgres: slots are
rows numbered under a primary key, so two takers cannot both hold slot n; SQLite: the
statement runs under the file's write lock; Redis: it is one script).
"""

from __future__ import annotations

from collections.abc import Sequence

from ferry.drivers._stores.statements import Statements

_EXTRA_ROUNDS = 8
"""Tries beyond ``limit`` before a key whose free slots keep going to others reports busy.

Each lost round means another holder took a slot, so ``limit`` lost rounds fill the key;
only slots freed and retaken meanwhile need the extra rounds.
"""


class StatementSlotStore:
    """At most ``limit`` unexpired holders per key (the ``lease_slots`` table; Redis:
    ``slot:<key>``)."""

    def __init__(self, statements: Statements) -> None:
        self._s = statements

    async def acquire(self, key: str, *, holder: str, limit: int, ttl_ms: int) -> bool:
        """Take a slot (re-taking one ``holder`` has only extends it). ``slot_acquire``
        answers a row when it took one, with ``contended`` when a free-looking slot went to
        a concurrent taker first: then another slot may be free, so it tries again."""
        for _ in range(limit + _EXTRA_ROUNDS):
            now = self._s.clock.now_ms()
            rows = await self._s.write(
                "slot_acquire", key=key, holder=holder, limit=limit, now=now, until=now + ttl_ms
            )
            if not rows or not rows[0]["contended"]:
                return bool(rows) and bool(rows[0]["acquired"])
        return False

    async def release(self, key: str, *, holder: str) -> None:
        await self._s.write("slot_release", key=key, holder=holder)

    async def holders(self, key: str) -> Sequence[str]:
        rows = await self._s.read("slot_holders", key=key, now=self._s.clock.now_ms())
        return [row["holder"] for row in rows]
