"""The scheduler loop: rounds never overlap, SIGTERM drains the round in flight, then the
lease is released."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from digest_tasks import digest_task
from support.waiting import blocked_in, eventually

from ferry._clock import FrozenClock
from ferry._scheduler import Scheduler, SchedulerStore
from ferry.drivers import MemoryJobDriver
from ferry.drivers.protocol import EnqueueRequest, EnqueueResult, RunFilter
from ferry.errors import FerryError

START = 1_767_225_600_000  # 2026-01-01T00:00:00Z
FIRST_3AM = START + 3 * 3_600_000


class GatedDriver(MemoryJobDriver):
    """The memory driver with a gate in front of enqueue, to hold a round in flight."""

    def __init__(self, clock: FrozenClock) -> None:
        super().__init__(clock=clock)
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()
        self.enqueue_calls = 0

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        self.enqueue_calls += 1
        self.entered.set()
        await self.gate.wait()
        return await super().enqueue_many(requests)


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(START)


@pytest.fixture
def store(driver: GatedDriver) -> SchedulerStore:
    return SchedulerStore(driver)


@pytest.fixture
def driver(clock: FrozenClock) -> GatedDriver:
    return GatedDriver(clock)


def scheduler(driver: GatedDriver, store: SchedulerStore) -> Scheduler:
    return Scheduler(driver=driver, tasks=[digest_task()], holder="node-a")


async def test_two_rounds_never_overlap_in_one_process(
    clock: FrozenClock, store: SchedulerStore, driver: GatedDriver
) -> None:
    node = scheduler(driver, store)
    await node.run_round()  # first sight of the task
    clock.set(FIRST_3AM)
    first = asyncio.create_task(node.run_round())
    await asyncio.wait_for(driver.entered.wait(), 5)
    second = asyncio.create_task(node.run_round())  # a caller arriving mid-round joins it
    await blocked_in(second, "Scheduler.run_round")
    driver.gate.set()
    one, other = await asyncio.gather(first, second)
    assert one is other
    assert driver.enqueue_calls == 1
    assert one is not None and [f.occurrence_ms for f in one.fired] == [FIRST_3AM]


async def test_sigterm_finishes_the_round_in_flight_then_deletes_the_lease_row(
    clock: FrozenClock, store: SchedulerStore, driver: GatedDriver
) -> None:
    node = scheduler(driver, store)
    running = asyncio.create_task(node.run())
    await eventually(lambda: clock.next_deadline_ms() is not None, what="the first tick wait")
    clock.set(FIRST_3AM)  # the tick wait ends and a round starts firing 03:00
    await asyncio.wait_for(driver.entered.wait(), 5)
    node.drain("SIGTERM")
    await blocked_in(running, "Scheduler.run_round")  # drained, and still on the round
    assert not running.done(), "the round in flight is waited out"
    assert await store.leader(now_ms=clock.now_ms()) is not None
    driver.gate.set()
    await asyncio.wait_for(running, 5)
    assert await store.leader(now_ms=clock.now_ms()) is None, "lease row deleted on the way out"
    assert len(await driver.introspect.list_runs(RunFilter())) == 1
    assert (await store.ticks())["nightly_digest"].last_occurrence_ms == FIRST_3AM


async def test_a_round_asked_for_while_draining_is_refused_with_x_draining(
    store: SchedulerStore, driver: GatedDriver
) -> None:
    node = scheduler(driver, store)
    node.drain()
    with pytest.raises(FerryError) as caught:
        await node.run_round()
    assert caught.value.code == "X_DRAINING"
    assert "standby promotes" in caught.value.fix


async def test_a_standby_round_returns_nothing_and_enqueues_nothing(
    clock: FrozenClock, store: SchedulerStore, driver: GatedDriver
) -> None:
    leader = scheduler(driver, store)
    standby = Scheduler(driver=driver, tasks=[digest_task()], holder="node-b")
    await leader.run_round()
    clock.set(FIRST_3AM - 1_000)
    await leader.run_round()
    clock.set(FIRST_3AM)
    assert await standby.run_round() is None
    assert driver.enqueue_calls == 0


@pytest.mark.parametrize(("tick_ms", "lease_ms"), [(1_000, 1_000), (0, 30_000), (5_000, 2_000)])
def test_a_lease_that_does_not_outlast_a_tick_is_refused(
    store: SchedulerStore, driver: GatedDriver, tick_ms: int, lease_ms: int
) -> None:
    with pytest.raises(FerryError) as caught:
        Scheduler(driver=driver, tasks=[], tick_ms=tick_ms, lease_ms=lease_ms)
    assert caught.value.code == "X_INVARIANT"
    assert f"lease {lease_ms} ms" in caught.value.message
