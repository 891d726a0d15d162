"""Wake-ups without NOTIFY: this process's commits at once, everyone else's by a poll.

SQLite has no LISTEN. An enqueue through this driver announces itself to the process's
waiters the moment it commits; every other commit — another process's enqueue, a settle
that puts a run back, the application's transactional enqueue or outbox append — is seen
by one watcher per driver: a thread of its own reading ``PRAGMA data_version`` every
``poll_ms`` (default 20 ms) on a connection of its own. The pragma changes only when
another connection committed to the file and costs microseconds, and the thread touches
the event loop only when it did, so an idle process polls for well under 1% of a core
(docs/drivers.md has the measured figures). A cross-process enqueue therefore waits half
a poll on average; the worker's idle poll stays as the fallback, as with every driver,
and finds delayed runs when they come due.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
from collections.abc import Callable

from ferry._clock import Clock
from ferry.drivers._sqlite.connection import open_connection
from ferry.drivers._sqlite.target import SqliteTarget
from ferry.drivers._wake import Health, SettleWaiters, SourcedWake

logger = logging.getLogger("ferry.drivers.sqlite")

DEFAULT_WAKE_POLL_MS = 20
"""How often the watcher reads ``data_version``: the bound on a cross-process wake."""

IDLE_POLL_MS = 5_000
"""How long an idle waiter waits between polls while the watcher works (it would have been
woken by any commit); delayed runs coming due are found by this poll."""

IDLE_POLL_UNWATCHED_MS = 1_000
"""How long it waits while the watcher cannot read the file."""

_RETRY_S = 0.1
"""How soon the watcher tries again to open a file that is not there (yet)."""


class SqliteWake(SourcedWake):
    """The ``QueueWake`` of one kind of arrival (runs, or outbox entries)."""

    def __init__(self, watcher: CommitWatcher, clock: Clock) -> None:
        super().__init__(
            watcher, clock, idle_poll_ms=IDLE_POLL_MS, unhealthy_poll_ms=IDLE_POLL_UNWATCHED_MS
        )


class CommitWatcher(Health):
    """Reads the file's ``data_version`` every ``poll_ms`` on a thread and wakes both kinds
    of waiter when another connection committed; started by the first ``wake()``."""

    def __init__(self, target: SqliteTarget, *, clock: Clock, poll_ms: int) -> None:
        super().__init__()
        self._target = target
        self._poll_s = poll_ms / 1000
        self.runs = SqliteWake(self, clock)
        self.outbox = SqliteWake(self, clock)
        self.ended = SettleWaiters(
            self, clock, idle_poll_ms=IDLE_POLL_MS, unhealthy_poll_ms=IDLE_POLL_UNWATCHED_MS
        )
        """Result waiters: told of this process's ends by the driver, and of every commit
        of another connection by the watcher (which cannot know what ended)."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def announce(self) -> None:
        """Wake every waiter of every kind (a commit of this process, or the watcher's)."""
        self.runs.announce()
        self.outbox.announce()
        self.ended.announce()

    def start(self) -> None:
        """Begin watching (idempotent). An in-memory store has no other connection to
        watch: every commit is this process's own, announced as it lands."""
        if self._target.memory:
            self._set_healthy(True)
        elif self._thread is None:
            loop = asyncio.get_running_loop()
            self._thread = threading.Thread(
                target=self._watch, args=(loop,), name="ferry-sqlite-wake", daemon=True
            )
            self._thread.start()

    async def close(self) -> None:
        """Stop watching."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            await asyncio.to_thread(thread.join)
        self._set_healthy(False)

    def _watch(self, loop: asyncio.AbstractEventLoop) -> None:
        connection: sqlite3.Connection | None = None
        seen: int | None = None
        healthy = False
        delay = 0.0
        try:
            while not self._stop.wait(delay):
                delay = self._poll_s
                try:
                    if connection is None:
                        connection = open_connection(self._target, "watcher")
                    [[version]] = connection.execute("PRAGMA data_version").fetchall()
                except sqlite3.Error as error:  # not there yet, or gone: the poll outlives it
                    if connection is not None:
                        connection.close()
                        connection = None
                    if healthy:
                        logger.warning("jobs.wake.lost", extra={"error": str(error)})
                        self._call(loop, self._set_healthy, False)
                    healthy, seen = False, None
                    delay = min(self._poll_s, _RETRY_S)
                    continue
                # Only news reaches the event loop. The first read after a gap counts as
                # news: commits made while nobody watched are found by one claim now.
                if not healthy:
                    self._call(loop, self._set_healthy, True)
                if version != seen:
                    self._call(loop, self.announce)
                healthy, seen = True, version
        finally:
            if connection is not None:
                connection.close()

    @staticmethod
    def _call(
        loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: object
    ) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
            loop.call_soon_threadsafe(callback, *args)

    def _became_healthy(self) -> None:
        logger.info("jobs.wake.watching", extra={"poll_ms": round(self._poll_s * 1000)})
