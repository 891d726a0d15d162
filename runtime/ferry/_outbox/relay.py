"""``OutboxRelay``: moves committed outbox entries to their publisher, at least once.

Each pass claims a batch with a lease, publishes entry by entry, and marks the ones that
published. A relay that dies between a publish and its mark leaves the entry leased; the
lease lapses and the next pass publishes it again — so consumers must be idempotent, which
every job is by declaration. A failed publish is noted on the row and waits out its lease
instead of spinning.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from ferry._aio import first_of
from ferry._duration import Duration, to_ms
from ferry._identity import new_worker_id
from ferry._outbox.publisher import OutboxPublisher
from ferry._tracecontext import attached
from ferry.drivers.capabilities import OUTBOX, need
from ferry.drivers.protocol import JobDriver, RetentionPolicy
from ferry.errors import FerryError

logger = logging.getLogger("ferry.outbox")

ERROR_BACKOFF_MS = 1_000
"""How long the relay waits after a pass that could not reach its store."""


@dataclass(frozen=True, slots=True)
class RelayPass:
    """What one pass did: entries claimed, published (and marked), and failed."""

    claimed: int
    published: int
    failed: int


class OutboxRelay:
    """Publishes the entries of one driver's outbox through one publisher."""

    def __init__(
        self,
        *,
        source: JobDriver,
        publisher: OutboxPublisher,
        relay_id: str | None = None,
        lease: Duration = "30s",
        batch: int = 100,
        retain_published: Duration = "7d",
        prune_every: Duration = "1m",
    ) -> None:
        if batch < 1:
            raise FerryError(
                "X_INVARIANT",
                f"outbox relay batch {batch} is not a positive number of entries",
                "pass batch=100 (the default) or another positive number",
            )
        self.source = source
        self.store = need(source, OUTBOX, by="the outbox relay")
        self.publisher = publisher
        self.relay_id = relay_id or new_worker_id()
        self.lease_ms = to_ms(lease, what="relay lease")
        self.batch = batch
        self.retain_published_ms = to_ms(retain_published, what="retain_published")
        self.prune_every_ms = to_ms(prune_every, what="relay prune_every")
        self._next_prune_ms = 0
        self._stopping = asyncio.Event()

    async def run_once(self) -> RelayPass:
        """Claim one batch, publish each entry, mark those that published."""
        entries = await self.store.claim(
            relay_id=self.relay_id, lease_ms=self.lease_ms, limit=self.batch
        )
        published: list[str] = []
        failed = 0
        for entry in entries:
            try:
                # The run it enqueues carries the trace the entry was appended under.
                with attached(entry.traceparent):
                    await self.publisher.publish(entry)
            except Exception as error:
                failed += 1
                reason = str(error) if isinstance(error, FerryError) else repr(error)
                logger.warning(
                    "outbox.publish.failed",
                    extra={"entry_id": entry.id, "type": entry.type, "error": reason},
                )
                await self.store.publish_failed(entry.id, relay_id=self.relay_id, error=reason)
                continue
            published.append(entry.id)
        marked = await self.store.mark_published(published, relay_id=self.relay_id)
        return RelayPass(claimed=len(entries), published=len(marked), failed=failed)

    async def prune(self) -> int:
        """Delete entries published longer than ``retain_published`` ago."""
        retention = RetentionPolicy(
            completed_ms=None, dead_ms=None, published_outbox_ms=self.retain_published_ms
        )
        return (await self.source.prune(retention)).outbox

    def drain(self, signal_name: str = "SIGTERM") -> None:
        """Stop after the pass in flight; ``run`` then returns."""
        if not self._stopping.is_set():
            logger.info(
                "outbox.relay.draining", extra={"relay_id": self.relay_id, "signal": signal_name}
            )
        self._stopping.set()

    async def run(self) -> None:
        """Relay until ``drain()``: a pass, then sleep until a commit wakes it or the idle
        poll (which also finds entries whose lease lapsed) comes round."""
        stop = self._stopping
        wake = self.store.wake()
        clock = self.source.clock
        logger.info("outbox.relay.started", extra={"relay_id": self.relay_id})
        while not stop.is_set():
            try:
                done = await self.run_once()
                if clock.now_ms() >= self._next_prune_ms:
                    await self.prune()
                    self._next_prune_ms = clock.now_ms() + self.prune_every_ms
            except Exception as error:
                # A database that went away comes back; the relay must outlive it.
                logger.error(
                    "outbox.relay.pass.failed", extra={"error": repr(error)}, exc_info=error
                )
                await first_of(stop.wait(), clock.sleep_ms(ERROR_BACKOFF_MS))
                continue
            if done.claimed < self.batch:
                await first_of(stop.wait(), wake.wait(wake.idle_poll_ms))
        logger.info("outbox.relay.stopped", extra={"relay_id": self.relay_id})
