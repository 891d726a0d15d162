"""Wake-ups without NOTIFY: this process's commits at once, everyone else's by a poll.

SQLite has no LISTEN. An enqueue through this driver announces itself to the process's
waiters the moment it commits; every other commit — another process's enqueue, a settle
that puts a run back, the application's transactional enqueue or outbox append — is seen
by one watcher per driver that reads ``PRAGMA data_version`` every ``poll_ms`` (default
25 ms) on the driver's reader connection. The pragma costs microseconds and changes only
when another connection committed to the file, so an idle process polls without taking a
lock or touching a table. A cross-process enqueue therefore waits half a poll on average
(docs/drivers.md has the measured figures); the worker's idle poll stays as the fallback,
as with every driver, and finds delayed runs when they come due.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from ferry._clock import Clock
from ferry.drivers._sqlite.database import Database
from ferry.drivers._wake import Arrivals

logger = logging.getLogger("ferry.drivers.sqlite")

DEFAULT_WAKE_POLL_MS = 25
"""How often the watcher reads ``data_version``: the bound on a cross-process wake."""

IDLE_POLL_MS = 5_000
"""How long an idle waiter waits between polls while the watcher works (it would have been
woken by any commit); delayed runs coming due are found by this poll."""

IDLE_POLL_UNWATCHED_MS = 1_000
"""How long it waits while the watcher cannot read the file."""

HealthListener = Callable[[bool], None]


class SqliteWake(Arrivals):
    """The ``QueueWake`` of one kind of arrival (runs, or outbox entries)."""

    def __init__(self, watcher: CommitWatcher, clock: Clock) -> None:
        super().__init__(clock)
        self._watcher = watcher

    @property
    def healthy(self) -> bool:
        """True while the watcher reads the file (so every commit wakes waiters)."""
        return self._watcher.healthy

    @property
    def idle_poll_ms(self) -> int:
        return IDLE_POLL_MS if self.healthy else IDLE_POLL_UNWATCHED_MS

    def add_health_listener(self, listener: HealthListener) -> None:
        """Call ``listener(healthy)`` on every change of health (e.g. to set a gauge)."""
        self._watcher.add_health_listener(listener)


class CommitWatcher:
    """Reads the file's ``data_version`` every ``poll_ms`` and wakes both kinds of waiter
    when another connection committed; started by the first ``wake()``."""

    def __init__(self, database: Database, *, clock: Clock, poll_ms: int) -> None:
        self._db = database
        self._clock = clock
        self._poll_ms = poll_ms
        self.runs = SqliteWake(self, clock)
        self.outbox = SqliteWake(self, clock)
        self._healthy = False
        self._health_listeners: list[HealthListener] = []
        self._task: asyncio.Task[None] | None = None

    @property
    def healthy(self) -> bool:
        return self._healthy

    def add_health_listener(self, listener: HealthListener) -> None:
        self._health_listeners.append(listener)

    def start(self) -> None:
        """Begin watching (idempotent)."""
        if self._task is None:
            self._task = asyncio.create_task(self._watch(), name="ferry-sqlite-wake")

    async def close(self) -> None:
        """Stop watching."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._set_healthy(False)

    async def _watch(self) -> None:
        seen: int | None = None
        while True:
            try:
                version = await self._db.data_version()
            except Exception as error:  # whatever the file does, the idle poll outlives it
                if self._healthy:
                    logger.warning(
                        "jobs.wake.lost", extra={"error": f"{type(error).__name__}: {error}"}
                    )
                self._set_healthy(False)
            else:
                # The first read after a gap counts as news: commits made while nobody
                # watched are found by one claim now.
                if version != seen:
                    self.runs.announce()
                    self.outbox.announce()
                seen = version
                self._set_healthy(True)
            await self._clock.sleep_ms(self._poll_ms)

    def _set_healthy(self, healthy: bool) -> None:
        if healthy == self._healthy:
            return
        self._healthy = healthy
        if healthy:
            logger.info("jobs.wake.watching", extra={"poll_ms": self._poll_ms})
        for listener in self._health_listeners:
            listener(healthy)
