"""``RateBuckets`` on SQLite: each rated key's window, one row of ``ferry_rate_windows``.

The claim reads and writes a key's window inside its own ``BEGIN IMMEDIATE`` transaction
(``runs.claim``), so the file's write lock makes every claimer on the host see the starts
of the one before it: the limit holds across processes. This store only reads it.
"""

from __future__ import annotations

import json

from ferry.drivers._sqlite.database import Database
from ferry.drivers.rates import RateWindow


class SqliteRateBuckets:
    """The ``ferry_rate_windows`` table, read."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def window(self, key: str) -> RateWindow:
        rows = await self._db.fetch("rate_window", {"key": key})
        if not rows:
            return RateWindow()
        return RateWindow(
            tuple(json.loads(rows[0]["starts"])), tuple(json.loads(rows[0]["booked"]))
        )
