"""One pub/sub session per driver, so an idle worker or relay starts the moment a run is
enqueued instead of at its next poll.

The enqueue script (and a settle that puts a run straight back, a retry, an outbox
append) publishes on the prefix's channel from inside the script, so the message leaves
once the write is done. Pub/sub keeps nothing for a subscriber that is away: on every
(re)subscribe the waiters poll once, and while the session is down they poll on the
short interval. Waiting, health and reconnecting are ``ferry.drivers._wake``'s.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from redis.asyncio import Redis

from ferry._aio import cancellable, first_of
from ferry._clock import Clock
from ferry.drivers._wake import PROBE_INTERVAL_MS
from ferry.drivers._wake import Listener as _Listener

logger = logging.getLogger("ferry.drivers.redis")


class PubSubListener(_Listener):
    """The driver's one subscribed connection over its channels; heals itself."""

    def __init__(
        self, client: Callable[[], Awaitable[Redis]], channels: Sequence[str], *, clock: Clock
    ) -> None:
        super().__init__(channels, clock=clock, logger=logger)
        self._client = client

    async def _listen(self) -> None:
        pubsub = (await self._client()).pubsub(ignore_subscribe_messages=True)
        try:
            await cancellable(pubsub.subscribe(*self.channels))
            self._listening()
            loop = asyncio.get_running_loop()
            silent_since = loop.time()
            while True:
                # Beside the next message, a channel being added (the ended channel, when
                # this process first waits for a result) ends the session: the pub/sub
                # connection is closed below, whatever state the cancelled read left it in.
                getting = asyncio.ensure_future(
                    cancellable(pubsub.get_message(timeout=PROBE_INTERVAL_MS / 1000))
                )
                await first_of(getting, self._renewal())
                if self._renewed():
                    return
                message = getting.result()
                if message is not None:
                    silent_since = loop.time()
                    if message["type"] == "message":
                        self._arrived(message["channel"], str(message["data"]))
                elif loop.time() - silent_since >= PROBE_INTERVAL_MS / 1000:
                    # Silence for a whole probe interval: ask the server, so a session that
                    # died without a word (a dropped network path) is noticed.
                    silent_since = loop.time()
                    await cancellable(pubsub.ping())
        finally:
            await pubsub.aclose()  # type: ignore[no-untyped-call]
