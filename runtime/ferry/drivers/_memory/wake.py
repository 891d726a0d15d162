"""Wake-ups within one process: a commit sets an event every waiter shares."""

from __future__ import annotations

import asyncio

IDLE_POLL_MS = 5_000
"""The memory wake never misses a commit in its process; the poll only finds due timers."""


class MemoryWake:
    """An ``asyncio.Event`` set by each enqueue (or outbox append) of this driver."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    @property
    def healthy(self) -> bool:
        return True

    @property
    def idle_poll_ms(self) -> int:
        return IDLE_POLL_MS

    def notify(self) -> None:
        self._event.set()

    async def wait(self, timeout_ms: int) -> bool:
        try:
            await asyncio.wait_for(self._event.wait(), timeout_ms / 1000)
        except TimeoutError:
            return False
        self._event.clear()
        return True
