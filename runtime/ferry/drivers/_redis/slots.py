"""``SlotStore`` on Redis: fleet-wide concurrency slots as sorted sets, never process memory.

A key's slots are ``{prefix}:slot:<key>`` (holder -> expiry); each holder's keys are
``{prefix}:held:<holder>``, so a settle or renewal releases or extends every slot of its
run by id; ``{prefix}:slots`` orders every slot by expiry for prune. Check and take are
one script, so two acquirers never both see the last free slot.
"""

from __future__ import annotations

from collections.abc import Sequence

from ferry._clock import Clock
from ferry.drivers._redis.connection import Connection


class RedisSlotStore:
    """At most ``limit`` unexpired holders per key."""

    def __init__(self, connection: Connection, clock: Clock) -> None:
        self._connection = connection
        self._clock = clock

    async def acquire(self, key: str, *, holder: str, limit: int, ttl_ms: int) -> bool:
        now = self._clock.now_ms()
        taken = await self._connection.run("slot_acquire", key, holder, limit, now, now + ttl_ms)
        return bool(taken)

    async def release(self, key: str, *, holder: str) -> None:
        await self._connection.run("slot_release", key, holder)

    async def holders(self, key: str) -> Sequence[str]:
        live = await self._connection.zrangebyscore(
            self._connection.keys("slot", key), f"({self._clock.now_ms()}", "+inf"
        )
        return sorted(live)
