"""Every number, id and name a caller hands ferry is checked against its declared bound
before a driver sees it, the same on every driver: out of range is an ``X_*`` refusal
naming the field, what was refused stored nothing, and the worker keeps working.
Run ids list in numeric order on every driver, past run 999 and across pages."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import ferry._operations as operations
from ferry import FerryError
from ferry._bounds import MAX_DURATION_MS
from ferry.drivers.protocol import JobDriver, Progress, RunFilter
from ferry.testing import Harness

from .jobs_bounds import reporter, sleeper
from .jobs_fixture import flaky, reset

HUGE_ID = "9" * 5_000


@pytest.fixture(autouse=True)
def _fresh() -> None:
    reset()


async def _stored(driver: JobDriver) -> int:
    return len(await driver.introspect.list_runs(RunFilter(limit=500)))


async def test_run_ids_list_in_numeric_order_past_run_999_and_across_pages(
    harness: Harness,
) -> None:
    """1,100 runs: ids 999 and 1000 side by side, three pages of at most 500."""
    enqueued = await flaky.enqueue_many([{"id": str(n)} for n in range(1_100)])
    ids = [int(r.job_id) for r in enqueued]
    seen: list[str] = []
    before: str | None = None
    while True:
        page = await operations.list_runs(harness.driver, {"limit": "500", "before": before})
        seen += [run.id for run in page.runs]
        before = page.next_before_id
        if before is None:
            break
    assert [int(i) for i in seen] == sorted(ids, reverse=True), "newest first, as numbers"
    assert len(seen) == 1_100 and seen[0] == str(max(ids))


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"delay": 10**20}, "enqueue delay"),
        ({"delay": MAX_DURATION_MS / 1000 + 1}, "enqueue delay"),
        ({"run_at": datetime(1969, 12, 31, tzinfo=UTC)}, "enqueue run_at"),
    ],
)
async def test_a_due_time_out_of_range_is_refused_and_stores_nothing(
    harness: Harness, options: dict[str, object], field: str
) -> None:
    with pytest.raises(FerryError) as refused:
        await flaky.enqueue({"id": "late"}, **options)  # type: ignore[arg-type]
    assert refused.value.code == "X_OUT_OF_RANGE" and refused.value.message.startswith(field)
    assert refused.value.fix
    assert await _stored(harness.driver) == 0


async def test_the_latest_and_earliest_due_times_are_stored_and_listed(harness: Harness) -> None:
    last = await flaky.enqueue({"id": "last"}, run_at=datetime(9999, 12, 31, 23, 59, tzinfo=UTC))
    first = await flaky.enqueue({"id": "first"}, run_at=datetime(1970, 1, 1, tzinfo=UTC))
    page = await operations.list_runs(harness.driver, {})
    assert [run.id for run in page.runs] == [first.job_id, last.job_id]
    shown = await operations.show_run(harness.driver, last.job_id)
    assert shown.summary.run_at_ms == 253_402_300_740_000


@pytest.mark.parametrize(
    ("input", "field"),
    [
        ({"seconds": 10.0**20}, "step.sleep('nap')"),
        ({"seconds": 3e12}, "step.sleep('nap')"),
        ({"step": "a" * 600}, "step name"),
        ({"step": "nul\\0name"}, "step name"),
    ],
)
async def test_a_step_out_of_bounds_fails_its_run_by_code_and_the_worker_goes_on(
    harness: Harness, input: dict[str, object], field: str
) -> None:
    run_id = (await sleeper.enqueue({"id": "x", **input})).job_id
    await harness.drain()
    run = await operations.show_run(harness.driver, run_id)
    assert run.summary.state == "dead"
    error = run.summary.last_error
    assert error is not None and error.code.startswith("X_") and field in error.message
    assert error.code in ("X_OUT_OF_RANGE", "X_INVARIANT", "X_TEXT_NOT_STORABLE")
    assert not run.steps, "the refused step wrote nothing"
    await test_a_normal_run_still_completes(harness)


async def test_progress_at_its_bound_reads_back_exactly(harness: Harness) -> None:
    """The largest progress a run can store (a signed 64-bit count) is reported digit for
    digit: no driver reads it through a double on its way to ``jobs show``."""
    most = 2**63 - 1
    run_id = (await reporter.enqueue({"id": "most", "current": most - 2, "total": most})).job_id
    await harness.drain()
    run = await operations.show_run(harness.driver, run_id)
    assert run.summary.state == "completed"
    assert run.progress == Progress(most - 2, most)


@pytest.mark.parametrize(
    ("current", "total"), [(2**63, 1), (1, 10**30), (-1, 1), (1.5, 2), ("1", 2), (True, 1)]
)
async def test_progress_out_of_bounds_fails_the_run_not_its_settle(
    harness: Harness, current: object, total: object
) -> None:
    run_id = (await reporter.enqueue({"id": "p", "current": current, "total": total})).job_id
    await harness.drain()
    run = await operations.show_run(harness.driver, run_id)
    assert run.summary.state == "dead"
    assert run.summary.last_error is not None
    assert run.summary.last_error.code == "X_OUT_OF_RANGE"
    assert "progress" in run.summary.last_error.message
    await test_a_normal_run_still_completes(harness)


@pytest.mark.parametrize("run_id", [HUGE_ID, "0", "007", "-1", "1e3", " 1", "", 2**63, 0])
async def test_a_run_id_no_run_can_have_is_refused_by_every_operation(
    harness: Harness, run_id: str | int
) -> None:
    for operation in (operations.show_run, operations.retry_run, operations.cancel_run):
        with pytest.raises(FerryError) as refused:
            await operation(harness.driver, run_id)
        assert refused.value.code == "X_RUN_ID_INVALID"
    if isinstance(run_id, str):
        assert await harness.driver.introspect.get_run(run_id) is None, "the driver's own parse"


async def test_an_id_given_as_a_number_names_the_same_run(harness: Harness) -> None:
    run_id = (await flaky.enqueue({"id": "n"})).job_id
    shown = await operations.show_run(harness.driver, int(run_id))
    assert shown.summary.id == run_id


@pytest.mark.parametrize("window", ["0", "367d", "1e20d", "99999999999999999999999d"])
async def test_a_stats_window_out_of_range_is_refused(harness: Harness, window: str) -> None:
    with pytest.raises(FerryError) as refused:
        operations.stats_window_ms(window)
    assert refused.value.code in ("X_OUT_OF_RANGE", "X_INVARIANT")
    assert refused.value.message.startswith("window")
    year = operations.stats_window_ms("366d")
    assert await operations.queue_stats(harness.driver, year) == []


async def test_a_normal_run_still_completes(harness: Harness) -> None:
    """The property every refusal above keeps: the worker goes on with ordinary work."""
    done = await flaky.enqueue({"id": f"normal-{datetime.now(UTC).timestamp()}"})
    await harness.drain()
    run = await operations.show_run(harness.driver, done.job_id)
    assert run.summary.state == "completed"
