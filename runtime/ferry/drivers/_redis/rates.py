"""``RateBuckets`` on Redis: each rated key's window, the hash ``{prefix}:rate:<key>``.

The claim script applies the rule itself (``rate_take`` in ``lua/lib.lua``) while it
leases, so a script's check and write are one step on Redis' one thread; this store only
reads a window. ``{prefix}:rate-expiry`` orders the keys by when their window empties, for
prune.
"""

from __future__ import annotations

from ferry.drivers._redis.connection import Connection
from ferry.drivers.rates import RateWindow


class RedisRateBuckets:
    """Rate windows, read."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def window(self, key: str) -> RateWindow:
        starts, booked = await self._connection.hmget(
            self._connection.keys("rate", key), ["starts", "booked"]
        )
        return RateWindow(_instants(starts), _instants(booked))


def _instants(text: str | None) -> tuple[int, ...]:
    return tuple(int(item) for item in text.split(",")) if text else ()
