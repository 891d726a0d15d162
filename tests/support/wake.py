"""Watching a driver's wake in tests: from the moment it listens, its health changes and
its wake-ups, as events to await."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from ferry.drivers._wake import ChannelWake
from ferry.drivers.protocol import JobDriver

EVENT_BOUND_S = 10.0
"""How long a test waits for a health change or a wake-up before failing (a guard, not a
timing)."""


class HealthLog:
    """The wake's health changes, in order."""

    def __init__(self, wake: ChannelWake) -> None:
        self.changes: asyncio.Queue[bool] = asyncio.Queue()
        wake.add_health_listener(self.changes.put_nowait)

    async def next(self) -> bool:
        return await asyncio.wait_for(self.changes.get(), EVENT_BOUND_S)


async def listening(driver: JobDriver) -> tuple[ChannelWake, HealthLog]:
    """``driver``'s wake once it listens, with its health log, and the wake-up its
    (re)connect announces consumed (what was sent while nobody listened is lost, so it
    polls once)."""
    wake = driver.wake()
    assert isinstance(wake, ChannelWake), wake
    health = HealthLog(wake)
    assert await health.next() is True
    assert await wake.wait(0) is True
    return wake, health


async def woken_by(wake: ChannelWake, action: Awaitable[object]) -> bool:
    """Whether a wait begun before ``action`` (awaited here) ends woken; the wait is long
    enough that only a wake-up ends it within the bound."""
    waiter = asyncio.create_task(wake.wait(60_000))
    await action
    return await asyncio.wait_for(waiter, EVENT_BOUND_S)
