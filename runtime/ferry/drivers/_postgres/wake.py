"""``QueueWake``: one LISTEN session per process, so an idle worker starts the moment a
run is enqueued instead of at its next poll.

The enqueue statement carries ``pg_notify`` (delivered on commit, never on rollback);
this session hears it and wakes every waiter. The wake is an accelerator, never the only
path: when the session drops, waiters keep polling while it reconnects in the background
with capped exponential backoff, and the poll interval tightens until it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import asyncpg

from ferry._aio import first_of
from ferry._clock import Clock
from ferry.drivers._postgres.database import ListenConnection

logger = logging.getLogger("ferry.drivers.postgres")

IDLE_POLL_MAX_MS = 2_000
"""How long an idle worker waits between polls when no wake is proven."""

IDLE_POLL_MAX_WAKE_PROVEN_MS = 5_000
"""How long it waits while the wake is proven: a NOTIFY would have woken it sooner."""

RECONNECT_BACKOFF_MS = (100, 10_000)
"""First and largest delay between reconnect attempts (doubling in between)."""

PROBE_INTERVAL_MS = 30_000
"""How often an otherwise silent session is asked ``SELECT 1`` to prove it still answers."""

_PROBE_TIMEOUT_S = 5.0

HealthListener = Callable[[bool], None]


class QueueWake:
    """A LISTEN session on one channel that wakes waiters and heals itself."""

    def __init__(
        self,
        session: Callable[[], AbstractAsyncContextManager[ListenConnection]],
        channel: str,
        *,
        clock: Clock,
    ) -> None:
        self._session = session
        self._channel = channel
        self._clock = clock
        self._arrived = asyncio.Event()
        self._unseen = False
        self._healthy = False
        self._health_listeners: list[HealthListener] = []
        self._task: asyncio.Task[None] | None = None

    @property
    def healthy(self) -> bool:
        """True while the session is connected and listening."""
        return self._healthy

    @property
    def idle_poll_ms(self) -> int:
        """The longest an idle waiter should wait before polling anyway."""
        return IDLE_POLL_MAX_WAKE_PROVEN_MS if self._healthy else IDLE_POLL_MAX_MS

    def add_health_listener(self, listener: HealthListener) -> None:
        """Call ``listener(healthy)`` on every change of health (e.g. to set a gauge)."""
        self._health_listeners.append(listener)

    def start(self) -> None:
        """Begin listening in the background (idempotent; listens again after ``close``)."""
        if self._task is None:
            self._task = asyncio.create_task(self._keep_listening(), name="ferry-queue-wake")

    async def wait(self, timeout_ms: int) -> bool:
        """True once a NOTIFY arrives (or arrived since the last wait); False on timeout."""
        if self._unseen:
            self._unseen = False
            return True
        arrived = self._arrived
        await first_of(arrived.wait(), self._clock.sleep_ms(timeout_ms))
        if arrived.is_set():
            self._unseen = False
            return True
        return False

    async def close(self) -> None:
        """Stop listening and hand the session back."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._set_healthy(False)

    def _announce(self) -> None:
        # Each arrival sets the current event (waking every waiter on it) and installs a
        # fresh one; `_unseen` carries it to a worker that was busy, not waiting.
        self._unseen = True
        self._arrived.set()
        self._arrived = asyncio.Event()

    def _on_notify(self, connection: object, pid: int, channel: str, payload: object) -> None:
        self._announce()

    async def _keep_listening(self) -> None:
        failures = 0
        while True:
            try:
                async with self._session() as connection:
                    lost = asyncio.Event()
                    connection.add_termination_listener(lambda _, lost=lost: lost.set())
                    await connection.add_listener(self._channel, self._on_notify)
                    try:
                        failures = 0
                        self._set_healthy(True)
                        # Notifications sent while nobody listened are gone: poll once now.
                        self._announce()
                        await self._watch(connection, lost)
                    finally:
                        await _unlisten(connection, self._channel, self._on_notify)
            except Exception as error:  # whatever ended the session, the wake outlives it
                logger.warning(
                    "jobs.wake.lost", extra={"error": f"{type(error).__name__}: {error}"}
                )
            self._set_healthy(False)
            initial, ceiling = RECONNECT_BACKOFF_MS
            await self._clock.sleep_ms(min(initial * 2**failures, ceiling))
            failures += 1

    async def _watch(self, connection: ListenConnection, lost: asyncio.Event) -> None:
        """Return when the session drops; raise when it stops answering a probe."""
        while not lost.is_set():
            await first_of(lost.wait(), self._clock.sleep_ms(PROBE_INTERVAL_MS))
            if not lost.is_set():
                await connection.execute("SELECT 1", timeout=_PROBE_TIMEOUT_S)

    def _set_healthy(self, healthy: bool) -> None:
        if healthy == self._healthy:
            return
        self._healthy = healthy
        if healthy:
            logger.info("jobs.wake.listening", extra={"channel": self._channel})
        for listener in self._health_listeners:
            listener(healthy)


async def _unlisten(
    connection: ListenConnection, channel: str, callback: Callable[..., None]
) -> None:
    """Stop listening before the session goes back (a borrowed pool reuses it)."""
    if not connection.is_closed():
        with contextlib.suppress(OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            await connection.remove_listener(channel, callback)
