"""Arrivals: what a driver's wake-up source hands its waiters, whatever brings the news.

A NOTIFY (Postgres), a pub/sub message (Redis), a commit seen by a poll (SQLite) or an
enqueue in this process announces an arrival; every waiter waiting then wakes, and a
waiter that was busy when it came returns at once from its next wait, so an arrival
between two waits is never lost.

A driver with a push channel (PostgreSQL LISTEN/NOTIFY, Redis pub/sub) holds one session
per driver (``Listener``), listening on every channel it has (the queue's and the
outbox's), and wakes the waiters of each (``ChannelWake``). The wake is an accelerator,
never the only path: when the session drops, waiters keep polling while it reconnects in
the background with capped exponential backoff, and the poll interval tightens until it
is back. Such a driver supplies only ``Listener._listen``: one session, from connect to
loss.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence

from ferry._aio import first_of
from ferry._clock import Clock

IDLE_POLL_MAX_MS = 2_000
"""How long an idle waiter of a push channel waits between polls when no wake is proven."""

IDLE_POLL_MAX_WAKE_PROVEN_MS = 5_000
"""How long it waits while the wake is proven: a push would have woken it sooner."""

RECONNECT_BACKOFF_MS = (100, 10_000)
"""First and largest delay between a channel session's reconnect attempts (doubling in
between)."""

PROBE_INTERVAL_MS = 30_000
"""How often an otherwise silent channel session is probed to prove it still answers."""

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


class ChannelWake(SourcedWake):
    """The waiters of one channel of a ``Listener``; its ``QueueWake``."""

    def __init__(self, listener: Listener, clock: Clock) -> None:
        super().__init__(
            listener,
            clock,
            idle_poll_ms=IDLE_POLL_MAX_WAKE_PROVEN_MS,
            unhealthy_poll_ms=IDLE_POLL_MAX_MS,
        )


class Listener(Health):
    """A driver's one listening session over all its channels; heals itself."""

    def __init__(self, channels: Sequence[str], *, clock: Clock, logger: logging.Logger) -> None:
        super().__init__()
        self._clock = clock
        self._logger = logger
        self.channels = {channel: ChannelWake(self, clock) for channel in channels}
        self._task: asyncio.Task[None] | None = None

    def wake(self, channel: str) -> ChannelWake:
        """The waiters of ``channel``, listening from now on (idempotent)."""
        if self._task is None:
            self._task = asyncio.create_task(self._keep_listening(), name="ferry-wake")
        return self.channels[channel]

    async def close(self) -> None:
        """Stop listening and hand the session back."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._set_healthy(False)

    async def _listen(self) -> None:
        """One session: connect, subscribe to every channel, call ``_listening()``, and
        return (or raise) when the session is lost."""
        raise NotImplementedError

    def _listening(self) -> None:
        """The session listens: healthy, and every waiter polls once, because what was
        published while nobody listened is gone."""
        self._set_healthy(True)
        for wake in self.channels.values():
            wake.announce()

    def _arrived(self, channel: str) -> None:
        wake = self.channels.get(channel)
        if wake is not None:
            wake.announce()

    async def _keep_listening(self) -> None:
        failures = 0
        while True:
            try:
                await self._listen()
            except Exception as error:  # whatever ended the session, the wake outlives it
                self._logger.warning(
                    "jobs.wake.lost", extra={"error": f"{type(error).__name__}: {error}"}
                )
            if self.healthy:
                failures = 0  # it did listen: the next reconnect starts from the first delay
            self._set_healthy(False)
            initial, ceiling = RECONNECT_BACKOFF_MS
            await self._clock.sleep_ms(min(initial * 2**failures, ceiling))
            failures += 1

    def _became_healthy(self) -> None:
        self._logger.info("jobs.wake.listening", extra={"channels": sorted(self.channels)})
