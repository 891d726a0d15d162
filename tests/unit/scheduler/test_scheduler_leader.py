"""Leader election by an expiring lease (the driver's ``LeaseStore``), on a frozen clock."""

from __future__ import annotations

import logging

import pytest

from ferry._clock import FrozenClock
from ferry._scheduler import SCHEDULER_LEASE, LeaseLeader, SchedulerStore
from ferry.drivers import memory_job_driver

TTL = 30_000


@pytest.fixture
def store() -> SchedulerStore:
    return SchedulerStore(memory_job_driver())


def leader(store: SchedulerStore, clock: FrozenClock, holder: str) -> LeaseLeader:
    return LeaseLeader(
        store.leases,
        name=SCHEDULER_LEASE,
        holder=holder,
        clock=clock,
        ttl_ms=TTL,
        events="jobs.scheduler.leadership",
        logger=logging.getLogger("ferry.scheduler"),
    )


async def test_the_first_node_to_ask_takes_the_lease(store: SchedulerStore) -> None:
    clock = FrozenClock()
    a = leader(store, clock, "a")
    assert await a.acquire()
    lease = await store.leader(now_ms=clock.now_ms())
    assert lease is not None and lease.holder == "a"
    assert lease.expires_at_ms == clock.now_ms() + TTL


async def test_acquire_every_round_is_the_renewal(store: SchedulerStore) -> None:
    clock = FrozenClock()
    a, b = leader(store, clock, "a"), leader(store, clock, "b")
    started = clock.now_ms()
    assert await a.acquire()
    for _ in range(100):  # 100 rounds of 1 s: far past one TTL, renewed every round
        clock.advance("1s")
        assert await a.acquire()
        assert not await b.acquire()
    lease = await store.leader(now_ms=clock.now_ms())
    assert lease is not None and lease.holder == "a" and lease.acquired_at_ms == started
    assert lease.expires_at_ms == clock.now_ms() + TTL


async def test_a_standby_acquires_nothing_until_the_row_expires(
    store: SchedulerStore,
) -> None:
    clock = FrozenClock()
    a, b = leader(store, clock, "a"), leader(store, clock, "b")
    assert await a.acquire()
    clock.advance(TTL / 1000 - 0.001)
    assert not await b.acquire()
    clock.advance("1ms")  # the instant the row expires
    assert await b.acquire()
    lease = await store.leader(now_ms=clock.now_ms())
    assert lease is not None and lease.holder == "b" and lease.acquired_at_ms == clock.now_ms()


async def test_leadership_lost_is_logged_once_and_the_node_keeps_polling(
    store: SchedulerStore, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FrozenClock()
    a, b = leader(store, clock, "a"), leader(store, clock, "b")
    assert await a.acquire()
    clock.advance(TTL / 1000)  # a stalled past its TTL; b takes over
    assert await b.acquire()
    with caplog.at_level(logging.INFO, logger="ferry.scheduler"):
        for _ in range(5):
            assert not await a.acquire()
            clock.advance("1s")
    assert [r.getMessage() for r in caplog.records].count("jobs.scheduler.leadership-lost") == 1
    assert not a.held
    await b.release()
    assert await a.acquire(), "the node that lost kept polling and takes the free row"


async def test_release_lapses_the_lease_so_a_standby_promotes_on_its_next_round(
    store: SchedulerStore,
) -> None:
    clock = FrozenClock()
    a, b = leader(store, clock, "a"), leader(store, clock, "b")
    assert await a.acquire()
    await a.release()
    assert await store.leader(now_ms=clock.now_ms()) is None
    assert await b.acquire(), "no TTL to wait out"


async def test_releasing_a_lease_another_node_holds_leaves_it_alone(
    store: SchedulerStore,
) -> None:
    clock = FrozenClock()
    a, b = leader(store, clock, "a"), leader(store, clock, "b")
    assert await a.acquire()
    await b.release()
    lease = await store.leader(now_ms=clock.now_ms())
    assert lease is not None and lease.holder == "a"
