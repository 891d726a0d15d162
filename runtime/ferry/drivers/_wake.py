"""Arrivals: what a driver's wake-up source hands its waiters, whatever brings the news.

A NOTIFY (Postgres), a commit seen by a poll (SQLite) or an enqueue in this process
announces an arrival; every waiter waiting then wakes, and a waiter that was busy when it
came returns at once from its next wait, so an arrival between two waits is never lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ferry._aio import first_of
from ferry._clock import Clock

HealthListener = Callable[[bool], None]


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


class Health:
    """Whether a wake-up source (a LISTEN session, a commit watcher) delivers arrivals,
    and who is told when that changes (e.g. a gauge)."""

    def __init__(self) -> None:
        self._healthy = False
        self._health_listeners: list[HealthListener] = []

    @property
    def healthy(self) -> bool:
        return self._healthy

    def add_health_listener(self, listener: HealthListener) -> None:
        """Call ``listener(healthy)`` on every change of health."""
        self._health_listeners.append(listener)

    def _set_healthy(self, healthy: bool) -> None:
        if healthy == self._healthy:
            return
        self._healthy = healthy
        if healthy:
            self._became_healthy()
        for listener in self._health_listeners:
            listener(healthy)

    def _became_healthy(self) -> None:
        """Hook: the source delivers again (a subclass logs it)."""


class SourcedWake(Arrivals):
    """The ``QueueWake`` of arrivals brought by ``source``: while it is healthy an idle
    waiter can poll lazily (``idle_poll_ms``), while it is not, sooner."""

    def __init__(
        self, source: Health, clock: Clock, *, idle_poll_ms: int, unhealthy_poll_ms: int
    ) -> None:
        super().__init__(clock)
        self._source = source
        self._idle_poll_ms = idle_poll_ms
        self._unhealthy_poll_ms = unhealthy_poll_ms

    @property
    def healthy(self) -> bool:
        """True while arrivals are known to reach this process."""
        return self._source.healthy

    @property
    def idle_poll_ms(self) -> int:
        """The longest an idle waiter should wait before polling anyway."""
        return self._idle_poll_ms if self.healthy else self._unhealthy_poll_ms

    def add_health_listener(self, listener: HealthListener) -> None:
        """Call ``listener(healthy)`` on every change of health (e.g. to set a gauge)."""
        self._source.add_health_listener(listener)
