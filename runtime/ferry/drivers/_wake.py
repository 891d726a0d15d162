"""Arrivals: what a driver's wake-up source hands its waiters, whatever brings the news.

A NOTIFY (Postgres), a commit seen by a poll (SQLite) or an enqueue in this process
announces an arrival; every waiter waiting then wakes, and a waiter that was busy when it
came returns at once from its next wait, so an arrival between two waits is never lost.
"""

from __future__ import annotations

import asyncio

from ferry._aio import first_of
from ferry._clock import Clock


class Arrivals:
    """The waiters of one wake-up source."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._arrived = asyncio.Event()
        self._unseen = False

    async def wait(self, timeout_ms: int) -> bool:
        """True once something arrives (or arrived since the last wait); False on timeout."""
        if self._unseen:
            self._unseen = False
            return True
        arrived = self._arrived
        await first_of(arrived.wait(), self._clock.sleep_ms(timeout_ms))
        if arrived.is_set():
            self._unseen = False
            return True
        return False

    def announce(self) -> None:
        """Wake every waiter, and the next wait of one that is busy now."""
        # Each arrival sets the current event (waking every waiter on it) and installs a
        # fresh one; `_unseen` carries it to a waiter that was busy, not waiting.
        self._unseen = True
        self._arrived.set()
        self._arrived = asyncio.Event()
