"""Time as a parameter: every timer in ferry asks a ``Clock``.

Production code gets ``SystemClock``; tests get ``FrozenClock``, whose ``advance`` is the
only thing that moves time, so a three-day ``step.sleep`` or a 30 s timeout happens the
instant a test says so and never by waiting.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from typing import Protocol

from ferry._duration import Duration, to_ms


class Clock(Protocol):
    """What ferry needs of time: the current instant and a way to wait for a later one."""

    def now_ms(self) -> int:
        """Epoch milliseconds."""
        ...

    async def sleep_ms(self, ms: int) -> None:
        """Return once ``ms`` milliseconds have passed on this clock."""
        ...


class SystemClock:
    """The wall clock and the event loop's timers."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    async def sleep_ms(self, ms: int) -> None:
        await asyncio.sleep(max(ms, 0) / 1000)


class FrozenClock:
    """A clock that stands still until ``advance`` or ``set`` moves it.

    Sleepers wake in deadline order as time passes them; a sleeper whose deadline is
    already due returns at once.
    """

    def __init__(self, start_ms: int = 1_767_225_600_000) -> None:  # 2026-01-01T00:00:00Z
        self._now = start_ms
        self._sleepers: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now_ms(self) -> int:
        return self._now

    async def sleep_ms(self, ms: int) -> None:
        if ms <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._now + ms, next(self._order), future))
        await future

    def advance(self, by: Duration) -> int:
        """Move time forward by ``by`` and wake every sleeper it passes; returns the new now."""
        return self.set(self._now + to_ms(by, what="clock.advance"))

    def set(self, instant_ms: int) -> int:
        """Move time forward to ``instant_ms`` (never backwards) and wake due sleepers."""
        self._now = max(self._now, instant_ms)
        while self._sleepers and self._sleepers[0][0] <= self._now:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)
        return self._now

    def deadlines_ms(self) -> list[int]:
        """Every instant a sleeper waits for, earliest first (cancelled sleepers excluded):
        a test waits for the timer it means to fire before it advances the clock."""
        return sorted(deadline for deadline, _, future in self._sleepers if not future.done())

    def next_deadline_ms(self) -> int | None:
        """The earliest instant a sleeper waits for, if any (cancelled sleepers excluded)."""
        while self._sleepers and self._sleepers[0][2].done():
            heapq.heappop(self._sleepers)
        return self._sleepers[0][0] if self._sleepers else None
