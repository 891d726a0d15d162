"""One dispatch round at a time, on a frozen clock: on-time fires, catch-up, pauses, fencing."""

from __future__ import annotations

from typing import Any

import pytest
from digest_tasks import digest_task, send_digest

from ferry._clock import FrozenClock
from ferry._scheduler import Dispatcher, SchedulerStore, planned_fires, scheduler_leader
from ferry.drivers import MemoryJobDriver, memory_job_driver
from ferry.drivers.protocol import RunFilter
from ferry.errors import FerryError
from ferry.tasks._declaration import TaskHandle
from ferry.tasks._occurrences import occurrences

HOUR = 3_600_000
DAY = 24 * HOUR
START = 1_767_225_600_000  # FrozenClock's default: 2026-01-01T00:00:00Z
FIRST_3AM = START + 3 * HOUR


class Node:
    """A scheduler node without its loop: a lease and a dispatcher on shared state."""

    def __init__(
        self,
        holder: str,
        task: TaskHandle,
        store: SchedulerStore,
        clock: FrozenClock,
        driver: MemoryJobDriver,
    ) -> None:
        self.leader = scheduler_leader(store, holder, driver, ttl_ms=30_000)
        self.dispatcher = Dispatcher(driver=driver, store=store, tasks=[task], leader=self.leader)
        self.clock = clock

    async def round(self) -> list[int]:
        """Renew, then dispatch; the occurrences this round fired."""
        if not await self.leader.acquire():
            return []
        report = await self.dispatcher.dispatch_round(self.clock.now_ms())
        return [fired.occurrence_ms for fired in report.fired]


@pytest.fixture
def store(driver: MemoryJobDriver) -> SchedulerStore:
    return SchedulerStore(driver)


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(START)


@pytest.fixture
def driver(clock: FrozenClock) -> MemoryJobDriver:
    return memory_job_driver(clock=clock)


async def digest_rows(driver: MemoryJobDriver) -> list[Any]:
    return list(await driver.introspect.list_runs(RunFilter(name="send_digest", limit=1000)))


async def test_an_on_time_round_fires_the_occurrence_once_with_an_occurrence_scoped_key(
    store: SchedulerStore, clock: FrozenClock, driver: MemoryJobDriver
) -> None:
    node = Node("a", digest_task(), store, clock, driver)
    assert await node.round() == []  # first sight: the task starts counting now
    clock.set(FIRST_3AM)
    assert await node.round() == [FIRST_3AM]
    assert await node.round() == []
    (run,) = await digest_rows(driver)
    detail = await driver.introspect.get_run(run.id)
    assert detail is not None
    assert detail.idempotency_key == f"nightly_digest:{FIRST_3AM}:digest:{FIRST_3AM}"
    assert detail.payload == {"occurrence_ms": FIRST_3AM}
    tick = (await store.ticks())["nightly_digest"]
    assert (tick.last_occurrence_ms, tick.last_fired_at_ms) == (FIRST_3AM, FIRST_3AM)


async def test_a_new_task_does_not_fire_the_occurrences_before_it_was_first_seen(
    store: SchedulerStore, clock: FrozenClock, driver: MemoryJobDriver
) -> None:
    clock.set(START + 5 * DAY)
    node = Node("a", digest_task(catch_up="run-all"), store, clock, driver)
    assert await node.round() == []
    assert await digest_rows(driver) == []


async def test_a_missed_tick_fires_late_rather_than_being_skipped(
    store: SchedulerStore, clock: FrozenClock, driver: MemoryJobDriver
) -> None:
    node = Node("a", digest_task(catch_up="skip"), store, clock, driver)
    await node.round()
    clock.set(FIRST_3AM + 20 * 60_000)  # the leader was paused through 03:00 for 20 minutes
    assert await node.round() == [FIRST_3AM]
    tick = (await store.ticks())["nightly_digest"]
    assert tick.last_fired_at_ms == FIRST_3AM + 20 * 60_000


def test_planned_fires_follow_each_policy() -> None:
    due = occurrences("0 3 * * *", "UTC", START, START + 3 * DAY)
    assert len(due) == 3
    window = (START, START + 3 * DAY)
    assert planned_fires(digest_task(catch_up="skip"), *window) == [(due[2], due[2])]
    assert planned_fires(digest_task(catch_up="run-once"), *window) == [(due[0], due[2])]
    assert planned_fires(digest_task(catch_up="run-all", max_catch_up=2), *window) == [
        (due[0], due[0]),
        (due[1], due[1]),
    ]
    assert planned_fires(digest_task(), START, START + HOUR) == []


async def test_a_standby_dispatches_nothing(
    store: SchedulerStore, clock: FrozenClock, driver: MemoryJobDriver
) -> None:
    task = digest_task()
    leader, standby = (Node(h, task, store, clock, driver) for h in ("a", "b"))
    await leader.round()
    assert await standby.round() == []
    clock.set(FIRST_3AM - 10_000)
    await leader.round()  # the renewal a running leader makes every tick
    clock.set(FIRST_3AM)
    assert await standby.round() == []
    assert await leader.round() == [FIRST_3AM]
    assert len(await digest_rows(driver)) == 1


async def test_a_node_that_lost_the_lease_mid_round_cannot_advance_the_row(
    store: SchedulerStore, clock: FrozenClock, driver: MemoryJobDriver
) -> None:
    task = digest_task()
    old, new = (Node(h, task, store, clock, driver) for h in ("a", "b"))
    await old.round()
    clock.set(FIRST_3AM + 30_000)  # the old leader stalled past its TTL ...
    assert await new.leader.acquire()  # ... and the standby took the row over
    # The old node goes on with a round it started as leader: its enqueue lands, its row
    # write is fenced out, so the row still says 03:00 is due.
    report = await old.dispatcher.dispatch_round(clock.now_ms())
    assert report.fenced and report.fired == []
    assert (await store.ticks())["nightly_digest"].checked_through_ms == START
    # The new leader fires 03:00 again: the occurrence-scoped key resolves to the same run.
    fired = await new.dispatcher.dispatch_round(clock.now_ms())
    assert [f.occurrence_ms for f in fired.fired] == [FIRST_3AM]
    assert [r.deduplicated for r in fired.fired[0].results] == [True]
    assert len(await digest_rows(driver)) == 1


async def test_a_refused_entry_holds_the_task_back_and_it_fires_late_once_fixed(
    store: SchedulerStore, clock: FrozenClock, driver: MemoryJobDriver
) -> None:
    broken = [True]

    def entries(occurrence_ms: int) -> list[Any]:
        return [(send_digest, {"occurrence_ms": "soon" if broken[0] else occurrence_ms})]

    task = TaskHandle(
        cron="0 3 * * *", tz="UTC", enqueue=entries, catch_up="skip", max_catch_up=10, name="t"
    )
    node = Node("a", task, store, clock, driver)
    await node.round()
    clock.set(FIRST_3AM)
    report = await node.dispatcher.dispatch_round(clock.now_ms())
    assert report.refused["t"].code == "X_VALIDATION"
    assert (await store.ticks())["t"].checked_through_ms == START, "held back, not skipped"
    broken[0] = False
    clock.set(FIRST_3AM + HOUR)
    assert await node.round() == [FIRST_3AM]


async def test_a_paused_task_is_passed_over_and_fires_again_after_resume(
    store: SchedulerStore, clock: FrozenClock, driver: MemoryJobDriver
) -> None:
    node = Node("a", digest_task(catch_up="run-all"), store, clock, driver)
    await node.round()
    await store.pause_task("nightly_digest", now_ms=clock.now_ms())
    clock.set(FIRST_3AM + DAY)
    assert await node.round() == []
    await store.resume_task("nightly_digest")
    assert await node.round() == [], "a resume releases no burst of the paused occurrences"
    clock.set(FIRST_3AM + 2 * DAY)
    assert await node.round() == [FIRST_3AM + 2 * DAY]


async def test_a_task_with_no_entries_is_a_valid_no_op_tick(
    store: SchedulerStore, clock: FrozenClock, driver: MemoryJobDriver
) -> None:
    task = TaskHandle(
        cron="0 3 * * *", tz="UTC", enqueue=lambda _: [], catch_up="skip", max_catch_up=10, name="t"
    )
    node = Node("a", task, store, clock, driver)
    await node.round()
    clock.set(FIRST_3AM)
    assert await node.round() == [FIRST_3AM]
    assert await driver.introspect.list_runs(RunFilter()) == []


def test_a_task_enqueue_of_a_non_job_is_refused_at_dispatch() -> None:
    task = TaskHandle(
        cron="0 3 * * *",
        tz="UTC",
        enqueue=lambda _: [(print, {})],  # type: ignore[list-item]
        catch_up="skip",
        max_catch_up=10,
        name="t",
    )
    with pytest.raises(FerryError) as caught:
        task.dispatch_requests(FIRST_3AM)
    assert caught.value.code == "X_IDEMPOTENCY_REQUIRED"


async def test_one_tasks_broken_enqueue_does_not_stall_the_other_tasks(
    store: SchedulerStore, clock: FrozenClock, driver: MemoryJobDriver
) -> None:
    def broken(occurrence_ms: int) -> list[Any]:
        raise KeyError("tenant")

    bad = TaskHandle(
        cron="0 3 * * *", tz="UTC", enqueue=broken, catch_up="skip", max_catch_up=10, name="bad"
    )
    leader = scheduler_leader(store, "a", driver)
    dispatcher = Dispatcher(driver=driver, store=store, tasks=[bad, digest_task()], leader=leader)
    assert await leader.acquire()
    await dispatcher.dispatch_round(clock.now_ms())
    clock.set(FIRST_3AM)
    assert await leader.acquire()
    report = await dispatcher.dispatch_round(clock.now_ms())
    assert isinstance(report.refused["bad"], KeyError)
    assert [(f.task, f.occurrence_ms) for f in report.fired] == [("nightly_digest", FIRST_3AM)]
    assert (await store.ticks())["bad"].checked_through_ms == START, "held back, fires late"
