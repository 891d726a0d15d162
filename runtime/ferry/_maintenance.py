"""Maintenance: retention pruning, done by one process of the whole fleet.

Nothing else deletes history. Every round, ``driver.prune`` removes — in bounded batches,
short transactions — completed and cancelled runs past ``retain_completed``, dead runs past
``retain_dead`` (longer: dead letters are for people to read and retry), expired
concurrency slots, published outbox entries and webhook attempt rows past theirs.

One process does it: the one holding the driver's lease ``maintenance`` (``LeaseStore``,
held through ``ferry._leadership`` as the scheduler holds its own), renewed every round —
so a holder that dies loses it by expiry and nothing is left to clean up. A driver
without leases refuses maintenance at its construction (``X_DRIVER_CAPABILITY``).
The scheduler's leader bids for it while it leads (``ferry scheduler``); a worker started
with ``--maintenance`` bids for it always (a deployment without a scheduler). A scheduler
standing by, or a process that finds the slot held, prunes nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import asdict

from ferry._aio import first_of
from ferry._leadership import LeaseLeader
from ferry._metrics.maintenance_catalog import MaintenanceMetrics
from ferry.drivers.capabilities import LEASES, need
from ferry.drivers.protocol import JobDriver, PruneReport, RetentionPolicy

logger = logging.getLogger("ferry.maintenance")

_DAY_MS = 86_400_000

DEFAULT_RETENTION = RetentionPolicy(
    completed_ms=7 * _DAY_MS,
    dead_ms=30 * _DAY_MS,
    published_outbox_ms=7 * _DAY_MS,
    webhook_attempts_ms=30 * _DAY_MS,
    batch=1_000,
)
"""Completed and cancelled runs 7 days, dead runs 30, published outbox entries 7, webhook
attempt rows 30; deleted 1,000 rows per statement."""

DEFAULT_EVERY_MS = 60_000
"""How often the holder prunes."""

MAINTENANCE_LEASE = "maintenance"
"""The lease whose holder prunes."""


class Maintenance:
    """Prunes by ``policy`` every ``every_ms`` while this process holds the maintenance slot."""

    def __init__(
        self,
        driver: JobDriver,
        *,
        holder: str,
        policy: RetentionPolicy = DEFAULT_RETENTION,
        every_ms: int = DEFAULT_EVERY_MS,
        leading: Callable[[], bool] | None = None,
        metrics: MaintenanceMetrics | None = None,
    ) -> None:
        self.holder = holder
        self.policy = policy
        self.every_ms = max(every_ms, 1)
        self._driver = driver
        self._leading = leading
        self._metrics = metrics
        # Longer than a round's wait and than a long prune: the lease lapses only when its
        # holder stopped renewing it.
        self._slot = LeaseLeader(
            need(driver, LEASES, by="maintenance"),
            name=MAINTENANCE_LEASE,
            holder=holder,
            clock=driver.clock,
            ttl_ms=max(3 * self.every_ms, 300_000),
        )
        self._stopping = asyncio.Event()

    async def run_round(self) -> PruneReport | None:
        """Prune once if this process maintains; ``None`` when it stands by (a scheduler
        that does not lead, or another process holds the slot)."""
        if self._leading is not None and not self._leading():
            await self._give_up_slot()  # a standby holds nothing, so the leader can take over
            return None
        if not await self._slot.acquire():
            return None
        report = await self._driver.prune(self.policy)
        now_ms = self._driver.clock.now_ms()
        if self._metrics is not None:
            self._metrics.pruned(report, at_ms=now_ms)
        if any(asdict(report).values()):
            logger.info("jobs.maintenance.pruned", extra={"holder": self.holder, **asdict(report)})
        return report

    async def run(self) -> None:
        """A round every ``every_ms`` until ``drain()``; then give the slot back."""
        logger.info(
            "jobs.maintenance.started", extra={"holder": self.holder, "every_ms": self.every_ms}
        )
        clock = self._driver.clock
        while not self._stopping.is_set():
            try:
                await self.run_round()
            except Exception:
                # A database restarting ends no role: the next round prunes what this missed.
                logger.exception("jobs.maintenance.failed", extra={"holder": self.holder})
            await first_of(self._stopping.wait(), clock.sleep_ms(self.every_ms))
        try:
            await self._give_up_slot()
        except Exception:
            # The slot then lapses by its TTL instead: a later takeover, nothing lost.
            logger.exception("jobs.maintenance.release-failed", extra={"holder": self.holder})

    def drain(self, signal_name: str = "SIGTERM") -> None:
        """Stop after the round in flight; ``run`` then returns."""
        self._stopping.set()

    async def _give_up_slot(self) -> None:
        if self._slot.held:
            await self._slot.release()
