"""One LISTEN session per driver, so an idle worker or relay starts the moment a row is
committed instead of at its next poll.

The enqueue statement (and the outbox append) carries ``pg_notify``, delivered on commit and
never on rollback; the driver's one session listens on every channel it has (the queue's
and the outbox's) and wakes the waiters of each; a run enqueued for later says when it
falls due (payload ``<queue>@<run_at_ms>``), and waiters wake then. Waiting, health and
reconnecting are ``ferry.drivers._wake``'s; this module is the LISTEN session itself.
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
from ferry.drivers._wake import (
    IDLE_POLL_MAX_MS,
    IDLE_POLL_MAX_WAKE_PROVEN_MS,
    PROBE_INTERVAL_MS,
    RECONNECT_BACKOFF_MS,
    ChannelWake,
)
from ferry.drivers._wake import Listener as _Listener

__all__ = [
    "IDLE_POLL_MAX_MS",
    "IDLE_POLL_MAX_WAKE_PROVEN_MS",
    "RECONNECT_BACKOFF_MS",
    "ChannelWake",
    "Listener",
]

logger = logging.getLogger("ferry.drivers.postgres")

_PROBE_TIMEOUT_S = 5.0


class Listener(_Listener):
    """The driver's one LISTEN session over all its channels; heals itself."""

    def __init__(
        self,
        session: Callable[[], AbstractAsyncContextManager[ListenConnection]],
        channels: Sequence[str],
        *,
        clock: Clock,
    ) -> None:
        super().__init__(channels, clock=clock, logger=logger)
        self._session = session

    def _on_notify(self, connection: object, pid: int, channel: str, payload: object) -> None:
        self._arrived(channel, payload if isinstance(payload, str) else "")

    async def _listen(self) -> None:
        async with self._session() as connection:
            lost = asyncio.Event()
            connection.add_termination_listener(lambda _, lost=lost: lost.set())
            # A snapshot: a channel followed while these subscribe renews the session, and
            # must not change the dict under this loop.
            for channel in list(self.channels):
                await connection.add_listener(channel, self._on_notify)
            try:
                self._listening()
                await self._watch(connection, lost)
            finally:
                await _unlisten(connection, list(self.channels), self._on_notify)

    async def _watch(self, connection: ListenConnection, lost: asyncio.Event) -> None:
        """Return when the session drops or a channel is added; raise when it stops
        answering a probe."""
        while not lost.is_set():
            await first_of(lost.wait(), self._renewal(), self._clock.sleep_ms(PROBE_INTERVAL_MS))
            if self._renewed():
                return
            if not lost.is_set():
                await connection.execute("SELECT 1", timeout=_PROBE_TIMEOUT_S)


async def _unlisten(
    connection: ListenConnection, channels: Sequence[str], callback: Callable[..., None]
) -> None:
    """Stop listening before the session goes back (a borrowed pool reuses it)."""
    if not connection.is_closed():
        with contextlib.suppress(OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            for channel in channels:
                await connection.remove_listener(channel, callback)
