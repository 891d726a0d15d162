"""One LISTEN session per driver, so an idle worker or relay starts the moment a row is
committed instead of at its next poll.

The enqueue statement (and the outbox append) carries ``pg_notify``, delivered on commit and
never on rollback; the driver's one session listens on every channel it has (the queue's
and the outbox's) and wakes the waiters of each. The wake is an accelerator, never the only
path: when the session drops, waiters keep polling while it reconnects in the background
with capped exponential backoff, and the poll interval tightens until it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager

import asyncpg

from ferry._aio import first_of
from ferry._clock import Clock
from ferry.drivers._postgres.database import ListenConnection
from ferry.drivers._wake import Health, SourcedWake

logger = logging.getLogger("ferry.drivers.postgres")

IDLE_POLL_MAX_MS = 2_000
"""How long an idle waiter waits between polls when no wake is proven."""

IDLE_POLL_MAX_WAKE_PROVEN_MS = 5_000
"""How long it waits while the wake is proven: a NOTIFY would have woken it sooner."""

RECONNECT_BACKOFF_MS = (100, 10_000)
"""First and largest delay between reconnect attempts (doubling in between)."""

PROBE_INTERVAL_MS = 30_000
"""How often an otherwise silent session is asked ``SELECT 1`` to prove it still answers."""

_PROBE_TIMEOUT_S = 5.0


class ChannelWake(SourcedWake):
    """The waiters of one channel; implements ``QueueWake`` over the driver's session."""

    def __init__(self, listener: Listener, clock: Clock) -> None:
        super().__init__(
            listener,
            clock,
            idle_poll_ms=IDLE_POLL_MAX_WAKE_PROVEN_MS,
            unhealthy_poll_ms=IDLE_POLL_MAX_MS,
        )


class Listener(Health):
    """The driver's one LISTEN session over all its channels; heals itself."""

    def __init__(
        self,
        session: Callable[[], AbstractAsyncContextManager[ListenConnection]],
        channels: Sequence[str],
        *,
        clock: Clock,
    ) -> None:
        super().__init__()
        self._session = session
        self._clock = clock
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

    def _on_notify(self, connection: object, pid: int, channel: str, payload: object) -> None:
        wake = self.channels.get(channel)
        if wake is not None:
            wake.announce()

    async def _keep_listening(self) -> None:
        failures = 0
        while True:
            try:
                async with self._session() as connection:
                    lost = asyncio.Event()
                    connection.add_termination_listener(lambda _, lost=lost: lost.set())
                    for channel in self.channels:
                        await connection.add_listener(channel, self._on_notify)
                    try:
                        failures = 0
                        self._set_healthy(True)
                        # Notifications sent while nobody listened are gone: poll once now.
                        for wake in self.channels.values():
                            wake.announce()
                        await self._watch(connection, lost)
                    finally:
                        await _unlisten(connection, list(self.channels), self._on_notify)
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

    def _became_healthy(self) -> None:
        logger.info("jobs.wake.listening", extra={"channels": sorted(self.channels)})


async def _unlisten(
    connection: ListenConnection, channels: Sequence[str], callback: Callable[..., None]
) -> None:
    """Stop listening before the session goes back (a borrowed pool reuses it)."""
    if not connection.is_closed():
        with contextlib.suppress(OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            for channel in channels:
                await connection.remove_listener(channel, callback)
