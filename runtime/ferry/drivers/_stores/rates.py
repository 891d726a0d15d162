"""``RateBuckets`` over statements: each rated key's window, one row of ``rate_windows``
(Redis: the hash ``rate:<key>``).

The claim applies the rule itself, in its own transaction (Postgres: the schema's
``rate_take`` locks the key's row for the rest of the claim, ``settle_and_rated_claim``;
SQLite: ``runs.claim`` reads and writes the window under the file's write lock; Redis:
``rate_take`` in the claim script), so claimers of one key take turns, each seeing the
starts of the one before. This store only reads a window.
"""

from __future__ import annotations

import json

from ferry.drivers._columns import Row
from ferry.drivers._stores.statements import Statements
from ferry.drivers.rates import RateWindow


class StatementRateBuckets:
    """Rate windows, read."""

    def __init__(self, statements: Statements) -> None:
        self._s = statements

    async def window(self, key: str) -> RateWindow:
        rows = await self._s.read("rate_window", key=key)
        return window_of(rows[0]) if rows else RateWindow()


def window_of(row: Row) -> RateWindow:
    """A ``rate_window`` row (its starts and bookings as JSON arrays) as a ``RateWindow``."""
    return RateWindow(tuple(json.loads(row["starts"])), tuple(json.loads(row["booked"])))
