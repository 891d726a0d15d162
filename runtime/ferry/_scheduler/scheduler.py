"""The scheduler role: a round every tick — renew or bid for the lease, dispatch if leading.

The lease is the driver's ``LeaseStore`` lease ``scheduler`` (``ferry._leadership``), so a
driver without leases and records refuses the scheduler at its construction.

Rounds never overlap in one process: the timer re-arms on the round it finished, and a
caller arriving while a round is in flight joins it instead of opening a second one over
the same last-tick rows. SIGTERM stops dispatching, waits out the round in flight, then
deletes the lease row so the standby promotes on its next round.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable

from ferry._aio import first_of
from ferry._identity import new_worker_id
from ferry._leadership import LeaseLeader
from ferry._metrics.scheduler_catalog import SchedulerMetrics
from ferry._scheduler.dispatch import Dispatcher, RoundReport
from ferry._scheduler.store import SCHEDULER_LEASE, SchedulerStore
from ferry.drivers.protocol import JobDriver
from ferry.errors import FerryError
from ferry.tasks._declaration import TaskHandle

logger = logging.getLogger("ferry.scheduler")

DEFAULT_TICK_MS = 1_000
DEFAULT_LEADER_TTL_MS = 30_000


class Scheduler:
    """Dispatches ``tasks`` while this node holds the lease; a warm standby otherwise."""

    def __init__(
        self,
        *,
        driver: JobDriver,
        tasks: Iterable[TaskHandle],
        tick_ms: int = DEFAULT_TICK_MS,
        lease_ms: int = DEFAULT_LEADER_TTL_MS,
        holder: str | None = None,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        if tick_ms < 1 or lease_ms <= tick_ms:
            # A lease no longer than a tick lapses between two renewals of a healthy leader.
            raise FerryError(
                "X_INVARIANT",
                f"scheduler tick {tick_ms} ms and lease {lease_ms} ms: the lease must outlast "
                "a tick, and a tick must be at least 1 ms",
                "keep the defaults (tick 1 s, lease 30 s), or a lease many ticks long",
            )
        self.tick_ms = tick_ms
        self._clock = driver.clock
        store = SchedulerStore(driver)
        self.leader = scheduler_leader(store, holder or new_worker_id(), driver, ttl_ms=lease_ms)
        self._dispatcher = Dispatcher(
            driver=driver, store=store, tasks=tasks, leader=self.leader, metrics=metrics
        )
        if metrics is not None:
            metrics.follow_leader(lambda: self.leader.held)
        self._round: asyncio.Task[RoundReport | None] | None = None
        self._stopping = asyncio.Event()

    @property
    def holder(self) -> str:
        """This node's id in the lease row."""
        return self.leader.holder

    async def run_round(self) -> RoundReport | None:
        """One round (``None`` when standing by); joins the round in flight if there is one."""
        if self._round is None:
            if self._stopping.is_set():
                raise FerryError(
                    "X_DRAINING",
                    f"scheduler {self.holder} is draining and starts no new dispatch round",
                    "none — the standby promotes and the tick fires late",
                )
            self._round = asyncio.create_task(self._one_round())
        # shield: a joiner that is cancelled must not cancel the round others wait on.
        return await asyncio.shield(self._round)

    async def run(self) -> None:
        """Round after round until ``drain()``; then give the lease back."""
        logger.info(
            "jobs.scheduler.started",
            extra={"holder": self.holder, "tick_ms": self.tick_ms, "ttl_ms": self.leader.ttl_ms},
        )
        while not self._stopping.is_set():
            try:
                await self.run_round()
            except Exception:
                # The process keeps polling through a database outage: the lease decides who
                # dispatches once it is back, and a missed tick fires late.
                logger.exception("jobs.scheduler.round-failed", extra={"holder": self.holder})
            await self._wait_tick()
        await self._release()

    def drain(self, reason: str = "SIGTERM") -> None:
        """Stop dispatching: the round in flight finishes, then ``run`` releases the lease."""
        if not self._stopping.is_set():
            logger.info("jobs.scheduler.draining", extra={"holder": self.holder, "reason": reason})
        self._stopping.set()

    async def _one_round(self) -> RoundReport | None:
        try:
            if not await self.leader.acquire():
                return None
            report = await self._dispatcher.dispatch_round(self._clock.now_ms())
            if report.fenced:
                self.leader.lost()
            return report
        finally:
            self._round = None

    async def _wait_tick(self) -> None:
        """Sleep one tick on the driver's clock, or less when ``drain()`` comes first."""
        await first_of(self._clock.sleep_ms(self.tick_ms), self._stopping.wait())

    async def _release(self) -> None:
        if self._round is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._round)
        try:
            await self.leader.release()
        except Exception:
            # The row then lapses by its TTL instead: slower handover, nothing lost.
            logger.exception("jobs.scheduler.release-failed", extra={"holder": self.holder})


def scheduler_leader(
    store: SchedulerStore, holder: str, driver: JobDriver, *, ttl_ms: int = DEFAULT_LEADER_TTL_MS
) -> LeaseLeader:
    """``holder``'s hold on the scheduler's lease, logging each change of leadership."""
    return LeaseLeader(
        store.leases,
        name=SCHEDULER_LEASE,
        holder=holder,
        clock=driver.clock,
        ttl_ms=ttl_ms,
        events="jobs.scheduler.leadership",
        logger=logger,
    )
