"""Leader election by an expiring lease row: whoever holds the unexpired row dispatches.

Never ``pg_try_advisory_lock``: that grant belongs to the database session, not to the
process — it outlives every transaction, survives or dies by the pool's reset policy on
release, and either way no node can renew it or prove it still holds one. A row with an
expiry is renewed by asking again, and a node that stops asking loses it by expiry, with
nothing to clean up.
"""

from __future__ import annotations

import logging

from ferry._clock import Clock
from ferry.drivers.protocol import SchedulerStore

logger = logging.getLogger("ferry.scheduler")

DEFAULT_LEADER_TTL_MS = 30_000


class LeaseLeader:
    """One node's view of the lease: ``acquire()`` every round is both the bid and the renewal."""

    def __init__(
        self,
        store: SchedulerStore,
        *,
        holder: str,
        clock: Clock,
        ttl_ms: int = DEFAULT_LEADER_TTL_MS,
    ) -> None:
        self.holder = holder
        self.ttl_ms = ttl_ms
        self._store = store
        self._clock = clock
        self._held = False
        self._expires_at_ms = 0

    @property
    def held(self) -> bool:
        """Whether the last ``acquire()`` (and no fenced write since) found this node leading,
        and the lease it renewed has not expired since."""
        # A round that raises (database down) renews nothing: the lease lapses by its TTL,
        # and a node must stop reporting leadership then, not only once it can ask again.
        return self._held and self._clock.now_ms() < self._expires_at_ms

    async def acquire(self) -> bool:
        """Take, renew or fail to get the lease; logs each change of leadership once."""
        now = self._clock.now_ms()
        held = await self._store.acquire_leadership(self.holder, now_ms=now, ttl_ms=self.ttl_ms)
        if held and not self._held:
            logger.info(
                "jobs.scheduler.leadership-acquired",
                extra={"holder": self.holder, "expires_at_ms": now + self.ttl_ms},
            )
        elif not held:
            self.lost()
        self._held = held
        self._expires_at_ms = now + self.ttl_ms
        return held

    def lost(self) -> None:
        """Note that another node leads now; logged once per loss, and the node keeps polling."""
        if self._held:
            logger.warning("jobs.scheduler.leadership-lost", extra={"holder": self.holder})
        self._held = False

    async def release(self) -> None:
        """Delete the lease row if this node has it, so a standby promotes on its next round
        rather than waiting out the TTL."""
        await self._store.release_leadership(self.holder)
        if self._held:
            logger.info("jobs.scheduler.leadership-released", extra={"holder": self.holder})
        self._held = False
