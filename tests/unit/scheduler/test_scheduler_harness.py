"""The frozen clock drives cron: ``clock.advance`` then ``drain()`` fires what a scheduler
running all along would have fired."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from digest_tasks import digest_task, send_digest

from ferry import task
from ferry._clock import FrozenClock
from ferry.drivers.protocol import RunFilter
from ferry.tasks import _declaration as declaration
from ferry.testing import Harness


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).astimezone(UTC).timestamp() * 1000)


@pytest.fixture
def declared_here() -> Iterator[None]:
    """Tasks declared by this test stop counting as declared after it, so no later test's
    harness fires them (the declared-task list is process-wide)."""
    before = declaration.declared_tasks()
    yield
    declaration._declared[:] = before


async def occurrences_enqueued(harness: Harness) -> list[int]:
    runs = await harness.driver.introspect.list_runs(RunFilter(name="send_digest", limit=1000))
    found = []
    for run in runs:
        detail = await harness.driver.introspect.get_run(run.id)
        assert detail is not None
        found.append(detail.payload["occurrence_ms"])
    return sorted(found)


@pytest.mark.usefixtures("declared_here")
async def test_advancing_three_days_over_a_daily_task_enqueues_three_digests() -> None:
    harness = Harness()
    task(
        cron="0 3 * * *",
        tz="UTC",
        enqueue=lambda occurrence_ms: [(send_digest, {"occurrence_ms": occurrence_ms})],
        name="nightly_digest",
    )
    harness.clock.advance("3d")
    trace = await harness.drain()
    assert len(trace.enqueued(send_digest)) == 3
    assert [run.state for run in trace.enqueued(send_digest)] == ["completed"] * 3


async def test_advancing_to_the_same_instant_twice_changes_no_row_count() -> None:
    harness = Harness(tasks=[digest_task()])
    harness.clock.advance("3d")
    first = len((await harness.drain()).runs)
    harness.clock.set(harness.clock.now_ms())
    second = len((await harness.drain()).runs)
    assert first == second == 3


async def test_a_replayed_tick_is_absorbed_by_the_jobs_idempotency_key() -> None:
    nightly = digest_task()
    harness = Harness(tasks=[nightly])
    harness.clock.advance("1d")
    await harness.drain()
    (occurrence,) = await occurrences_enqueued(harness)
    replayed = await harness.driver.enqueue_many(nightly.dispatch_requests(occurrence))
    assert [result.deduplicated for result in replayed] == [True]
    assert len((await harness.drain()).runs) == 1


async def test_entries_carry_the_occurrence_not_the_instant_they_were_drained() -> None:
    harness = Harness(tasks=[digest_task()])
    harness.clock.advance("3d")
    await harness.drain()
    start = ms("2026-01-01T03:00:00+00:00")
    assert await occurrences_enqueued(harness) == [start, start + 86_400_000, start + 172_800_000]


@pytest.mark.parametrize(
    ("cron", "start", "advance", "expected"),
    [
        # spring-forward: 02:30 does not exist on 2026-03-08 in New York; it fires at 03:00 EDT
        (
            "30 2 * * *",
            "2026-03-07T00:00:00-05:00",
            "2d",
            ["2026-03-07T02:30:00-05:00", "2026-03-08T03:00:00-04:00"],
        ),
        # fall-back: 01:30 happens twice on 2026-11-01; a fixed time fires on the first pass
        (
            "30 1 * * *",
            "2026-10-31T00:00:00-04:00",
            "2d",
            ["2026-10-31T01:30:00-04:00", "2026-11-01T01:30:00-04:00"],
        ),
        # fall-back: an interval runs through both passes of the repeated hour
        (
            "0 * * * *",
            "2026-11-01T00:30:00-04:00",
            "3h",
            ["2026-11-01T01:00:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T02:00:00-05:00"],
        ),
    ],
)
async def test_the_frozen_clock_drives_cron_across_dst_boundaries_in_the_tasks_zone(
    cron: str, start: str, advance: str, expected: list[str]
) -> None:
    harness = Harness(
        clock=FrozenClock(ms(start)), tasks=[digest_task(cron, "America/New_York", name="t")]
    )
    harness.clock.advance(advance)
    await harness.drain()
    assert await occurrences_enqueued(harness) == [ms(instant) for instant in expected]
