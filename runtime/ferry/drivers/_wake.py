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

A run enqueued for later is *expected*: its waiters wake at the instant it falls due
(``ferry._wakeup.DueInstants`` keeps the soonest few), not at their next idle poll. A push
channel's message says so with a payload ``<queue>@<run_at_ms>`` (``ChannelWake.heard``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from ferry._aio import first_of, reap, supervise
from ferry._clock import Clock
from ferry._wakeup import DueInstants

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
    """The waiters of one wake-up source, woken by an arrival or at an instant a run is
    known to fall due."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._arrived = asyncio.Event()
        self._unseen = False
        self._due = DueInstants()
        self._sooner = asyncio.Event()

    async def wait(self, timeout_ms: int) -> bool:
        """True once something arrives (or arrived since the last wait) or at an expected
        instant; False when ``timeout_ms`` passed first (on the clock)."""
        deadline = self._clock.now_ms() + timeout_ms
        while True:
            if self._unseen:
                self._unseen = False
                return True
            now = self._clock.now_ms()
            if self._due.take_due(now):
                return True
            if now >= deadline:
                return False
            soonest = self._due.soonest
            until = deadline if soonest is None else min(deadline, soonest)
            arrived = self._arrived
            await first_of(arrived.wait(), self._sooner.wait(), self._clock.sleep_ms(until - now))
            if arrived.is_set():  # every waiter of this arrival wakes, not only the first
                self._unseen = False
                return True

    def announce(self) -> None:
        """Wake every waiter, and the next wait of one that is busy now."""
        # Each arrival sets the current event (waking every waiter on it) and installs a
        # fresh one; `_unseen` carries it to a waiter that was busy, not waiting.
        self._unseen = True
        self._arrived.set()
        self._arrived = asyncio.Event()

    def expect(self, instant_ms: int) -> None:
        """Wake the waiters at ``instant_ms`` (on the clock): a run falls due then."""
        if self._due.add(instant_ms):
            # Waiters sleeping towards a later instant re-arm; none is woken early.
            self._sooner.set()
            self._sooner = asyncio.Event()


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

    def heard(self, payload: str) -> None:
        """A message's payload: ``<queue>`` (due now) or ``<queue>@<run_at_ms>``."""
        _, at, instant = payload.rpartition("@")
        if at and instant.isdigit():
            self.expect(int(instant))
        else:
            self.announce()


class SettleWaiters:
    """The waiters on runs ending in one process (``SettleNews``), each woken by news of a
    run it watches: ended ids heard on a channel (``heard``: ``"17,18,25"``) or told in
    process (``settled``), or news of anything (``announce``: a reconnect, another
    process's commit), after which every waiter reads its runs again."""

    def __init__(
        self, source: Health, clock: Clock, *, idle_poll_ms: int, unhealthy_poll_ms: int
    ) -> None:
        self._source = source
        self._clock = clock
        self._idle_poll_ms = idle_poll_ms
        self._unhealthy_poll_ms = unhealthy_poll_ms
        self._watching: dict[str, set[_Watch]] = {}
        self._watches: set[_Watch] = set()

    @property
    def idle_poll_ms(self) -> int:
        """How long a waiter may wait before it reads its runs anyway."""
        return self._idle_poll_ms if self._source.healthy else self._unhealthy_poll_ms

    def watch(self, job_ids: Iterable[str]) -> _Watch:
        """Begin watching ``job_ids``."""
        watch = _Watch(self, tuple(job_ids), self._clock)
        self._watches.add(watch)
        for job_id in watch.job_ids:
            self._watching.setdefault(job_id, set()).add(watch)
        return watch

    def settled(self, job_ids: Iterable[str]) -> None:
        """These runs ended: wake whoever watches one of them."""
        if not self._watches:
            return
        for job_id in job_ids:
            for watch in self._watching.get(job_id, ()):
                watch.tell()

    def heard(self, payload: str) -> None:
        """A message of the ended channel: the ids of runs one statement ended."""
        self.settled(payload.split(","))

    def announce(self) -> None:
        """Anything may have ended: wake every waiter."""
        for watch in self._watches:
            watch.tell()

    def forget(self, watch: _Watch) -> None:
        self._watches.discard(watch)
        for job_id in watch.job_ids:
            watching = self._watching.get(job_id)
            if watching is not None:
                watching.discard(watch)
                if not watching:
                    del self._watching[job_id]


class _Watch:
    """One waiter's ``SettleWatch``: news told between two waits is kept for the next."""

    __slots__ = ("_clock", "_news", "_told", "job_ids")

    def __init__(self, news: SettleWaiters, job_ids: tuple[str, ...], clock: Clock) -> None:
        self._news = news
        self._clock = clock
        self._told = asyncio.Event()
        self.job_ids = job_ids

    def tell(self) -> None:
        self._told.set()

    async def wait(self, timeout_ms: int) -> bool:
        """True once news came (or came since the last wait), False after ``timeout_ms``."""
        if not self._told.is_set():
            await first_of(self._told.wait(), self._clock.sleep_ms(timeout_ms))
        told = self._told.is_set()
        self._told.clear()
        return told

    def close(self) -> None:
        self._news.forget(self)


class Receiver(Protocol):
    """What a ``Listener`` hands a channel's messages to: a ``ChannelWake`` (the queue's,
    the outbox's) or ``SettleWaiters`` (the ended channel)."""

    def heard(self, payload: str) -> None: ...

    def announce(self) -> None: ...


class Listener(Health):
    """A driver's one listening session over all its channels; heals itself.

    The channels every process needs are listened on from the start; one only some
    processes need (the ended channel, for result waiters) is added by ``follow`` when
    first needed, which renews the session at once with every channel."""

    def __init__(self, channels: Sequence[str], *, clock: Clock, logger: logging.Logger) -> None:
        super().__init__()
        self._clock = clock
        self._logger = logger
        self._wakes = {channel: ChannelWake(self, clock) for channel in channels}
        self.channels: dict[str, Receiver] = dict(self._wakes)
        self._renew = asyncio.Event()
        """Set when a channel was added: the live session ends and a new one starts at once."""
        self._task: asyncio.Task[None] | None = None

    def wake(self, channel: str) -> ChannelWake:
        """The waiters of ``channel``, listening from now on (idempotent)."""
        self._start()
        return self._wakes[channel]

    def follow(self, channel: str, receiver: Receiver) -> None:
        """Listen on ``channel`` too from now on, handing its messages to ``receiver``
        (idempotent: a channel followed already keeps its receiver)."""
        if channel not in self.channels:
            self.channels[channel] = receiver
            self._renew.set()
        self._start()

    def _start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._keep_listening(), name="ferry-wake")
            # Each session's end is caught inside; this is for what is left: a bug.
            supervise(self._task, logger=self._logger, event="jobs.wake.lost")

    async def close(self) -> None:
        """Stop listening and hand the session back."""
        task, self._task = self._task, None
        await reap(task)
        self._set_healthy(False)

    async def _listen(self) -> None:
        """One session: connect, subscribe to every channel, call ``_listening()``, and
        return (or raise) when the session is lost, or once ``_renewal()`` returns."""
        raise NotImplementedError

    async def _renewal(self) -> None:
        """Return once a channel is added since the session subscribed (a session waits
        for this beside its messages, and then ends: a new one follows at once)."""
        await self._renew.wait()

    def _renewed(self) -> bool:
        """A channel was added since the session subscribed: the session should end."""
        return self._renew.is_set()

    def _listening(self) -> None:
        """The session listens: healthy, and every waiter polls once, because what was
        published while nobody listened is gone."""
        self._set_healthy(True)
        for wake in self.channels.values():
            wake.announce()

    def _arrived(self, channel: str, payload: str) -> None:
        """A message on ``channel``: its waiters wake now, or when the run it names falls
        due (``ChannelWake.heard``)."""
        wake = self.channels.get(channel)
        if wake is not None:
            wake.heard(payload)

    async def _keep_listening(self) -> None:
        failures = 0
        while True:
            self._renew.clear()
            try:
                await self._listen()
            except Exception as error:  # whatever ended the session, the wake outlives it
                self._logger.warning(
                    "jobs.wake.lost", extra={"error": f"{type(error).__name__}: {error}"}
                )
            else:
                if self._renew.is_set():
                    continue  # renewed for a new channel, not lost: subscribe again now
                # The server closed it (a restart, a failover): as much a loss.
                self._logger.warning("jobs.wake.lost", extra={"error": "the session was closed"})
            if self.healthy:
                failures = 0  # it did listen: the next reconnect starts from the first delay
            self._set_healthy(False)
            initial, ceiling = RECONNECT_BACKOFF_MS
            await self._clock.sleep_ms(min(initial * 2**failures, ceiling))
            failures += 1

    def _became_healthy(self) -> None:
        self._logger.info("jobs.wake.listening", extra={"channels": sorted(self.channels)})
