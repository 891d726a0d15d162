"""Concurrency slots in one process: key -> holder -> expiry."""

from __future__ import annotations

from collections.abc import Sequence

from ferry._clock import Clock


class MemorySlotStore:
    """The ``SlotStore`` of the memory driver (the driver releases and extends by holder)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._slots: dict[str, dict[str, int]] = {}

    async def acquire(self, key: str, *, holder: str, limit: int, ttl_ms: int) -> bool:
        return self.take(
            key, holder=holder, limit=limit, expires_at_ms=self._clock.now_ms() + ttl_ms
        )

    async def release(self, key: str, *, holder: str) -> None:
        self._slots.get(key, {}).pop(holder, None)

    async def holders(self, key: str) -> Sequence[str]:
        return sorted(self._live(key, self._clock.now_ms()))

    def take(self, key: str, *, holder: str, limit: int, expires_at_ms: int) -> bool:
        """Take a slot of ``key`` until ``expires_at_ms`` unless ``limit`` others hold one."""
        slots = self._live(key, self._clock.now_ms())
        if holder not in slots and len(slots) >= limit:
            return False
        slots[holder] = expires_at_ms
        self._slots[key] = slots
        return True

    def release_holder(self, holder: str) -> None:
        """Give back every slot ``holder`` holds (a settled run's key and caps)."""
        for slots in self._slots.values():
            slots.pop(holder, None)

    def extend_holder(self, holder: str, expires_at_ms: int) -> None:
        """Extend every slot ``holder`` holds to ``expires_at_ms``."""
        for slots in self._slots.values():
            if holder in slots:
                slots[holder] = expires_at_ms

    def prune_expired(self) -> int:
        """Forget expired slots (and keys left empty); answers how many went."""
        now = self._clock.now_ms()
        pruned = 0
        for key in list(self._slots):
            live = self._live(key, now)
            pruned += len(self._slots[key]) - len(live)
            if live:
                self._slots[key] = live
            else:
                del self._slots[key]
        return pruned

    def _live(self, key: str, now: int) -> dict[str, int]:
        return {h: exp for h, exp in self._slots.get(key, {}).items() if exp > now}
