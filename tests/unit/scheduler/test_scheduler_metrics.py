"""The scheduler's metrics: who leads, and what it dispatched, read from its registry."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from digest_tasks import digest_task, send_digest
from prometheus_client import CollectorRegistry
from support.waiting import eventually

from ferry._clock import FrozenClock
from ferry._jobs.facade import set_job_driver
from ferry._metrics import SchedulerMetrics
from ferry._metrics.queue_catalog import QueueSampler
from ferry._scheduler import Scheduler
from ferry.drivers import MemoryJobDriver

START = 1_767_225_600_000  # 2026-01-01T00:00:00Z
HOUR_MS = 3_600_000
LEASE_MS = 30_000


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(START)


@pytest.fixture
def driver(clock: FrozenClock) -> Iterator[MemoryJobDriver]:
    driver = MemoryJobDriver(clock=clock)
    previous = set_job_driver(driver)
    yield driver
    set_job_driver(previous)


@dataclass
class Node:
    """A scheduler and the metrics its ``/metrics`` would serve."""

    scheduler: Scheduler
    metrics: SchedulerMetrics

    @property
    def registry(self) -> CollectorRegistry:
        return self.metrics.registry

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
    return Node(scheduler, metrics)


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


async def test_the_leader_measures_the_queues_and_the_standby_reports_none(
    clock: FrozenClock, driver: MemoryJobDriver
) -> None:
    """The backlog a DurableJob scaled to zero is brought up by comes from the namespace's
    scheduler leader: it samples the queues, the standby clears what it may have sampled."""
    a, b = node(driver, "a"), node(driver, "b")
    for occurrence_ms in (1, 2, 3):
        await send_digest.enqueue({"occurrence_ms": occurrence_ms})
    samplers = [
        QueueSampler(
            driver, n.metrics.queues, every_ms=1_000, measuring=lambda n=n: n.scheduler.leader.held
        )
        for n in (a, b)
    ]
    running = [asyncio.create_task(sampler.run()) for sampler in samplers]

    def backlog(n: Node) -> float | None:
        return n.registry.get_sample_value("job_queue_backlog", {"queue": "default"})

    await a.scheduler.run_round()
    await b.scheduler.run_round()
    clock.advance("1s")
    await eventually(lambda: backlog(a) == 3.0, what="the leader's sample")
    assert backlog(b) is None, "the standby measures nothing"
    await a.scheduler.leader.release()
    await b.scheduler.run_round()
    clock.advance("1s")
    await eventually(lambda: backlog(b) == 3.0 and backlog(a) is None, what="the handover")
    for sampler in samplers:
        sampler.drain()
    await asyncio.gather(*running)


def test_the_scheduler_says_on_which_queue_its_app_declares_each_job() -> None:
    metrics = SchedulerMetrics(CollectorRegistry())
    metrics.declare_jobs([("send_digest", "default"), ("reindex", "bulk")])
    declared = {
        (s.labels["job"], s.labels["queue"]): s.value
        for family in metrics.registry.collect()
        for s in family.samples
        if s.name == "job_declared_info"
    }
    assert declared == {("send_digest", "default"): 1.0, ("reindex", "bulk"): 1.0}
