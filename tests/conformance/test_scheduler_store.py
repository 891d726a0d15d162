"""The scheduler's store, built once on leases and records, on every driver: ticks fenced
on the leader's lease that never move back, and pauses."""

from __future__ import annotations

from ferry._scheduler import SCHEDULER_LEASE, SchedulerStore, TaskTick
from ferry.drivers.protocol import JobDriver

START = 1_767_225_600_000
TTL = 30_000


async def test_a_tick_lands_only_for_the_leader_and_never_moves_back(driver: JobDriver) -> None:
    store = SchedulerStore(driver)
    tick = TaskTick("nightly", START + 10, START + 10, START + 20)
    lease = await store.leases.acquire(SCHEDULER_LEASE, "a", now_ms=START, ttl_ms=TTL)
    assert lease is not None
    assert await store.record_tick(tick, lease=lease, now_ms=START)
    stranger = await store.leases.acquire(SCHEDULER_LEASE, "b", now_ms=START, ttl_ms=TTL)
    assert stranger is None, "a leads"
    assert await store.record_tick(TaskTick("nightly", START + 5), lease=lease, now_ms=START)
    assert (await store.ticks())["nightly"] == tick, "an older write moves nothing back"
    assert not await store.record_tick(tick, lease=lease, now_ms=START + TTL), "lapsed: fenced"
    await store.leases.release(SCHEDULER_LEASE, "a")
    assert await store.leader(now_ms=START) is None


async def test_pause_and_resume_are_records(driver: JobDriver) -> None:
    store = SchedulerStore(driver)
    await store.pause_task("nightly", now_ms=START)
    await store.pause_task("nightly", now_ms=START + 1)
    assert await store.paused_tasks() == {"nightly": START}
    await store.resume_task("nightly")
    await store.resume_task("nightly")
    assert await store.paused_tasks() == {}
