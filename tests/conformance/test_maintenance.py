"""Maintenance on every driver: the process that maintains prunes what each retention lets
go and keeps what is younger; a scheduler standing by, or a process that finds the slot
held, prunes nothing. Time is the frozen clock's."""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry
from support.waiting import eventually

from ferry._clock import FrozenClock
from ferry._maintenance import DEFAULT_RETENTION, MAINTENANCE_LEASE, Maintenance
from ferry._metrics import MaintenanceMetrics
from ferry._scheduler import SchedulerStore, scheduler_leader
from ferry.drivers.capabilities import LEASES, need
from ferry.drivers.protocol import JobDriver

from .conftest import Append
from .test_prune import finish, states


async def test_maintenance_prunes_past_each_retention_and_keeps_what_is_younger(
    driver: JobDriver, clock: FrozenClock, append: Append
) -> None:
    metrics = MaintenanceMetrics(CollectorRegistry())
    maintenance = Maintenance(driver, holder="maintainer", metrics=metrics)
    await finish(driver, [f"old-{n}" for n in range(3)], "completed")
    await finish(driver, ["old-dead"], "dead")
    await append("published", {})
    [entry] = await driver.outbox.claim(relay_id="r", lease_ms=30_000, limit=1)
    await driver.outbox.mark_published([entry.id], relay_id="r")
    slots = driver.slots
    assert slots is not None
    await slots.acquire("k", holder="gone", limit=1, ttl_ms=1_000)

    clock.advance("6d")
    await finish(driver, ["young"], "completed")
    clock.advance("1d1ms")  # the first runs are a week and a millisecond old

    report = await maintenance.run_round()
    assert report is not None
    assert (report.completed, report.dead, report.slots, report.outbox) == (3, 0, 1, 1)
    assert await states(driver) == {"completed": 1, "dead": 1}, "younger than its retention"
    sample = metrics.registry.get_sample_value
    assert sample("job_maintenance_pruned_total", {"kind": "completed"}) == 3
    assert sample("job_maintenance_pruned_total", {"kind": "dead"}) == 0
    assert sample("job_maintenance_last_run_timestamp_seconds") == clock.now_ms() / 1000

    clock.advance("23d")  # dead letters keep their own, longer retention
    report = await maintenance.run_round()
    assert report is not None and (report.completed, report.dead) == (1, 1)
    assert await states(driver) == {}
    assert sample("job_maintenance_pruned_total", {"kind": "dead"}) == 1


async def test_only_the_scheduler_leader_prunes_and_a_standby_prunes_nothing(
    driver: JobDriver, clock: FrozenClock
) -> None:
    store = SchedulerStore(driver)
    leaders = [scheduler_leader(store, h, driver) for h in ("a", "b")]
    maintained = [
        Maintenance(driver, holder=leader.holder, leading=lambda leader=leader: leader.held)
        for leader in leaders
    ]
    first, second = leaders
    await finish(driver, ["old"], "completed")
    clock.advance("8d")
    # Every scheduler round renews or bids for the lease; maintenance reads the outcome.
    assert await first.acquire() and not await second.acquire()

    assert await maintained[1].run_round() is None, "a standby prunes nothing"
    assert await states(driver) == {"completed": 1}
    report = await maintained[0].run_round()
    assert report is not None and report.completed == 1

    # The leader hands over: its maintenance gives the slot up with its leadership, and the
    # new leader's maintenance takes it on its next round.
    assert await holder_of_maintenance(driver) == "a"
    await first.release()
    assert await maintained[0].run_round() is None
    assert await holder_of_maintenance(driver) is None, "given up with the leadership"
    await finish(driver, ["later"], "completed")
    clock.advance("8d")
    assert await second.acquire()
    report = await maintained[1].run_round()
    assert report is not None and report.completed == 1
    assert await holder_of_maintenance(driver) == "b"


async def test_two_processes_that_may_maintain_never_prune_together(
    driver: JobDriver, clock: FrozenClock
) -> None:
    # A worker started with --maintenance and a leading scheduler both bid for the slot.
    worker = Maintenance(driver, holder="worker")
    leader = Maintenance(driver, holder="scheduler", leading=lambda: True)
    await finish(driver, ["old"], "completed")
    clock.advance("8d")
    assert await worker.run_round() is not None
    assert await leader.run_round() is None, "the slot is held: one process prunes"
    assert await worker.run_round() is not None, "its holder renews it round after round"


async def test_the_loop_prunes_every_interval_and_gives_the_slot_back_when_drained(
    driver: JobDriver, clock: FrozenClock
) -> None:
    maintenance = Maintenance(driver, holder="maintainer", every_ms=60_000)
    running = asyncio.create_task(maintenance.run())
    next_round_at = clock.now_ms() + 60_000
    # The first round ran at start and the loop sleeps until the next one.
    await eventually(
        lambda: clock.next_deadline_ms() == next_round_at, what="the first round to end"
    )
    assert await holder_of_maintenance(driver) == "maintainer"
    await finish(driver, ["old"], "completed")
    clock.advance(DEFAULT_RETENTION.completed_ms / 1000)  # now a week old ...
    clock.advance("60s")  # ... and the next round comes round

    async def pruned() -> bool:
        return await states(driver) == {}

    await eventually(pruned, what="the next round pruning the week-old run")
    maintenance.drain()
    await asyncio.wait_for(running, 10)
    assert await holder_of_maintenance(driver) is None


async def holder_of_maintenance(driver: JobDriver) -> str | None:
    """Who holds the maintenance lease now (None: nobody)."""
    leases = need(driver, LEASES, by="the test")
    lease = await leases.read(MAINTENANCE_LEASE, now_ms=driver.clock.now_ms())
    return lease.holder if lease is not None else None
