"""``RateBuckets`` on Postgres: each rated key's window, one row of ``rate_windows``.

The claim applies the rule itself, through the schema's ``rate_take`` function, which
locks the key's row for the rest of the claim's transaction (``settle_and_rated_claim``):
claimers of one key take turns, each seeing the starts of the one before. This store only
reads a window.
"""

from __future__ import annotations

from ferry.drivers._postgres.database import Database
from ferry.drivers.rates import RateWindow


class PostgresRateBuckets:
    """The ``rate_windows`` table, read."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def window(self, key: str) -> RateWindow:
        pool = await self._db.pool()
        row = await pool.fetchrow(self._db.queries["rate_window"], key)
        return (
            RateWindow() if row is None else RateWindow(tuple(row["starts"]), tuple(row["booked"]))
        )
