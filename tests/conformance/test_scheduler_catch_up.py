"""Catch-up after a scheduler was stopped across several occurrences, on a frozen clock,
on every driver."""

from __future__ import annotations

import pytest

from ferry._clock import FrozenClock
from ferry._scheduler import Scheduler, SchedulerStore
from ferry.drivers.protocol import JobDriver, RunFilter
from ferry.tasks._declaration import CatchUp

from .jobs_digest import digest, digest_task

HOUR = 3_600_000
DAY = 24 * HOUR
START = 1_767_225_600_000  # 2026-01-01T00:00:00Z: where the frozen clock starts
FIRST_3AM = START + 3 * HOUR


async def fired_occurrences(driver: JobDriver) -> list[int]:
    occurrences = []
    for run in await driver.introspect.list_runs(RunFilter(name=digest.name, limit=100)):
        detail = await driver.introspect.get_run(run.id)
        assert detail is not None
        occurrences.append(detail.payload["occurrence_ms"])
    return sorted(occurrences)


@pytest.mark.parametrize(
    ("catch_up", "max_catch_up", "rounds"),
    [
        # five occurrences missed: days 0..4 at 03:00
        ("skip", 10, [[4]]),
        ("run-once", 10, [[0]]),
        ("run-all", 10, [[0, 1, 2, 3, 4]]),
        ("run-all", 2, [[0, 1], [2, 3], [4]]),
    ],
)
async def test_a_scheduler_restarted_after_five_missed_occurrences_catches_up_by_policy(
    driver: JobDriver,
    clock: FrozenClock,
    catch_up: CatchUp,
    max_catch_up: int,
    rounds: list[list[int]],
) -> None:
    assert clock.now_ms() == START
    nightly = digest_task(catch_up=catch_up, max_catch_up=max_catch_up)

    def node(holder: str) -> Scheduler:
        return Scheduler(driver=driver, tasks=[nightly], holder=holder)

    first = node("node-1")
    await first.run_round()  # the task's row starts at 00:00 on day 0
    await first.leader.release()  # stopped, as SIGTERM leaves it
    clock.set(START + 4 * DAY + 12 * HOUR)
    second = node("node-2")
    for expected in rounds:
        report = await second.run_round()
        assert report is not None
        assert [f.occurrence_ms for f in report.fired] == [FIRST_3AM + d * DAY for d in expected]
        assert all(f.fired_at_ms > f.occurrence_ms for f in report.fired), "late, not skipped"
    final = await second.run_round()
    assert final is not None and final.fired == []
    assert await fired_occurrences(driver) == sorted(
        FIRST_3AM + day * DAY for batch in rounds for day in batch
    )
    tick = (await SchedulerStore(driver).ticks())["nightly"]
    assert tick.checked_through_ms == FIRST_3AM + 4 * DAY, "the whole gap is handled, fired or not"
