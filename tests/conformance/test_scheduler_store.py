"""The scheduler's store on every driver: the lease, fenced monotonic ticks, pauses."""

from __future__ import annotations

import asyncio

import pytest

from ferry.drivers.protocol import JobDriver, SchedulerStore, TaskTick

START = 1_767_225_600_000
TTL = 30_000


@pytest.fixture
def store(driver: JobDriver) -> SchedulerStore:
    return driver.scheduler


async def test_of_many_nodes_racing_for_an_expired_lease_exactly_one_wins(
    store: SchedulerStore,
) -> None:
    assert await store.acquire_leadership("old", now_ms=START, ttl_ms=TTL)
    won = await asyncio.gather(  # concurrent statements, on separate pooled connections
        *(store.acquire_leadership(f"node-{n}", now_ms=START + TTL, ttl_ms=TTL) for n in range(6))
    )
    assert won.count(True) == 1
    lease = await store.leader(now_ms=START + TTL)
    assert lease is not None and lease.holder == f"node-{won.index(True)}"
    assert lease.acquired_at_ms == START + TTL


async def test_renewal_keeps_the_first_acquisition_instant_and_extends_the_expiry(
    store: SchedulerStore,
) -> None:
    assert await store.acquire_leadership("a", now_ms=START, ttl_ms=TTL)
    assert await store.acquire_leadership("a", now_ms=START + 1_000, ttl_ms=TTL)
    assert not await store.acquire_leadership("b", now_ms=START + TTL, ttl_ms=TTL)
    lease = await store.leader(now_ms=START + TTL)
    assert lease is not None
    assert (lease.holder, lease.acquired_at_ms, lease.expires_at_ms) == (
        "a",
        START,
        START + 1_000 + TTL,
    )


async def test_a_tick_lands_only_for_the_leader_and_never_moves_back(
    store: SchedulerStore,
) -> None:
    tick = TaskTick("nightly", START + 10, START + 10, START + 20)
    assert not await store.record_tick(tick, holder="a", now_ms=START), "no lease, no write"
    assert await store.acquire_leadership("a", now_ms=START, ttl_ms=TTL)
    assert await store.record_tick(tick, holder="a", now_ms=START)
    assert not await store.record_tick(tick, holder="b", now_ms=START), "fenced on the holder"
    assert await store.record_tick(TaskTick("nightly", START + 5), holder="a", now_ms=START)
    assert (await store.ticks())["nightly"] == tick, "an older write moves nothing back"
    await store.release_leadership("a")
    assert await store.leader(now_ms=START) is None


async def test_pause_and_resume_are_rows(store: SchedulerStore) -> None:
    await store.pause_task("nightly", now_ms=START)
    await store.pause_task("nightly", now_ms=START + 1)
    assert await store.paused_tasks() == {"nightly": START}
    await store.resume_task("nightly")
    await store.resume_task("nightly")
    assert await store.paused_tasks() == {}
