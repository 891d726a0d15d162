"""The scheduler's metrics: who leads, and what it dispatched, read from its registry."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from digest_tasks import digest_task
from prometheus_client import CollectorRegistry

from ferry._clock import FrozenClock
from ferry._metrics import SchedulerMetrics
from ferry._scheduler import Scheduler
from ferry.drivers import MemoryJobDriver

START = 1_767_225_600_000  # 2026-01-01T00:00:00Z
HOUR_MS = 3_600_000
LEASE_MS = 30_000


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(START)


@pytest.fixture
def driver(clock: FrozenClock) -> MemoryJobDriver:
    return MemoryJobDriver(clock=clock)


@dataclass
class Node:
    """A scheduler and the registry its ``/metrics`` would serve."""

    scheduler: Scheduler
    registry: CollectorRegistry

    def leader_gauge(self) -> float | None:
        return self.registry.get_sample_value("job_scheduler_leader")

    def dispatches(self, task: str = "hourly") -> float | None:
        return self.registry.get_sample_value("job_scheduler_dispatches_total", {"task": task})


def node(driver: MemoryJobDriver, holder: str) -> Node:
    """A scheduler with its own registry, as each process has, firing an hourly task."""
    metrics = SchedulerMetrics(CollectorRegistry())
    scheduler = Scheduler(
        driver=driver,
        tasks=[digest_task("0 * * * *", catch_up="run-all", name="hourly")],
        lease_ms=LEASE_MS,
        holder=holder,
        metrics=metrics,
    )
    return Node(scheduler, metrics.registry)


async def test_the_leader_gauge_is_1_on_the_lease_holder_and_0_on_the_standby(
    clock: FrozenClock, driver: MemoryJobDriver
) -> None:
    a, b = node(driver, "a"), node(driver, "b")
    assert (a.leader_gauge(), b.leader_gauge()) == (0.0, 0.0), "no round yet: nobody leads"
    await a.scheduler.run_round()
    await b.scheduler.run_round()
    assert (a.leader_gauge(), b.leader_gauge()) == (1.0, 0.0)
    await a.scheduler.leader.release()  # what a drained leader does on its way out
    clock.advance("1s")
    await b.scheduler.run_round()
    assert (a.leader_gauge(), b.leader_gauge()) == (0.0, 1.0)


async def test_a_leader_whose_renewals_stop_reports_0_once_its_lease_has_expired(
    clock: FrozenClock, driver: MemoryJobDriver
) -> None:
    """No round lands (the database is down): the lease lapses by its TTL, and so does the
    node's claim to lead, before it can even ask again."""
    a = node(driver, "a")
    await a.scheduler.run_round()
    clock.advance(LEASE_MS / 1000 - 0.001)
    assert a.leader_gauge() == 1.0
    clock.advance("1ms")
    assert a.leader_gauge() == 0.0


async def test_every_dispatched_occurrence_is_counted_per_task_from_zero(
    clock: FrozenClock, driver: MemoryJobDriver
) -> None:
    a, b = node(driver, "a"), node(driver, "b")
    assert (a.dispatches(), b.dispatches()) == (0.0, 0.0), "present before the first fire"
    await a.scheduler.run_round()  # first sight of the task: nothing due yet
    clock.advance(3 * HOUR_MS / 1000)  # run-all: three hourly occurrences due
    await a.scheduler.run_round()
    await b.scheduler.run_round()
    assert (a.dispatches(), b.dispatches()) == (3.0, 0.0), "the standby fires nothing"
    await a.scheduler.run_round()
    assert a.dispatches() == 3.0, "an occurrence is counted once, not every round"
