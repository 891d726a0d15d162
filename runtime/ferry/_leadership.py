"""Holding a named lease of the driver's ``LeaseStore``: one node's view of it, bid for and
renewed by the same call every round.

The scheduler's leadership (lease ``scheduler``) and the maintenance slot (lease
``maintenance``) are both this, written once above the drivers. Never
``pg_try_advisory_lock``: that grant belongs to the database session, not to the process —
it outlives every transaction, survives or dies by the pool's reset policy on release, and
either way no node can renew it or prove it still holds one. A lease with an expiry is
renewed by asking again, and a node that stops asking loses it by expiry, with nothing to
clean up. Its term fences what the holder writes under it (``RecordStore.put``).
"""

from __future__ import annotations

import logging

from ferry._clock import Clock
from ferry.drivers.protocol import Lease, LeaseStore


class LeaseLeader:
    """One node's hold on lease ``name``: ``acquire()`` every round is both the bid and the
    renewal; ``events`` (e.g. ``jobs.scheduler.leadership``) names the log lines of each
    change of hands (None: none)."""

    def __init__(
        self,
        leases: LeaseStore,
        *,
        name: str,
        holder: str,
        clock: Clock,
        ttl_ms: int,
        events: str | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.name = name
        self.holder = holder
        self.ttl_ms = ttl_ms
        self._leases = leases
        self._clock = clock
        self._events = events
        self._logger = logger or logging.getLogger("ferry")
        self._lease: Lease | None = None

    @property
    def lease(self) -> Lease | None:
        """The lease as the last ``acquire()`` left it, while it has not expired since
        (and no fenced write found it lost): what this node's writes are fenced on."""
        # A round that raises (database down) renews nothing: the lease lapses by its TTL,
        # and a node must stop reporting leadership then, not only once it can ask again.
        lease = self._lease
        return lease if lease is not None and self._clock.now_ms() < lease.expires_at_ms else None

    @property
    def held(self) -> bool:
        """Whether this node holds the lease (see ``lease``)."""
        return self.lease is not None

    async def acquire(self) -> bool:
        """Take, renew or fail to get the lease; logs each change of hands once."""
        lease = await self._leases.acquire(
            self.name, self.holder, now_ms=self._clock.now_ms(), ttl_ms=self.ttl_ms
        )
        if lease is None:
            self.lost()
            return False
        if self._lease is None or self._lease.term != lease.term:
            self._log(logging.INFO, "acquired", expires_at_ms=lease.expires_at_ms, term=lease.term)
        self._lease = lease
        return True

    def lost(self) -> None:
        """Note that another node holds it now; logged once per loss, the node keeps bidding."""
        if self._lease is not None:
            self._log(logging.WARNING, "lost")
        self._lease = None

    async def release(self) -> None:
        """Lapse the lease if this node holds it, so another node takes it at its next bid
        rather than waiting out the TTL."""
        held = self._lease is not None
        self._lease = None
        await self._leases.release(self.name, self.holder)
        if held:
            self._log(logging.INFO, "released")

    def _log(self, level: int, change: str, **extra: int) -> None:
        if self._events is not None:
            self._logger.log(
                level, f"{self._events}-{change}", extra={"holder": self.holder, **extra}
            )
