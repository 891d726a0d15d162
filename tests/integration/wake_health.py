"""Watching a driver's wake in tests: its health changes, as events to await."""

from __future__ import annotations

import asyncio

from ferry.drivers._wake import ChannelWake


class HealthLog:
    """The wake's health changes, in order."""

    def __init__(self, wake: ChannelWake) -> None:
        self.changes: asyncio.Queue[bool] = asyncio.Queue()
        wake.add_health_listener(self.changes.put_nowait)

    async def next(self) -> bool:
        return await asyncio.wait_for(self.changes.get(), 10)
