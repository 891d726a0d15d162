"""JobIntrospection: what every operator surface reads, the same on every driver."""

from __future__ import annotations

import asyncio

import pytest
from support.waiting import eventually

from ferry import FerryError
from ferry._clock import FrozenClock
from ferry._jobs.execute import execute_job
from ferry.drivers.protocol import ClaimOptions, JobError, NackOptions, RunFilter
from ferry.testing import Harness

from .jobs_fixture import effects, flaky, reset
from .jobs_steps import cooperative

LEASE = 120_000


@pytest.fixture(autouse=True)
def _fresh() -> None:
    reset()


async def test_list_runs_filters_and_pages_newest_first(
    harness: Harness, clock: FrozenClock
) -> None:
    ids = [
        (await flaky.enqueue({"id": str(i)}, queue="q" if i % 2 else "default")).job_id
        for i in range(6)
    ]
    introspect = harness.driver.introspect
    newest = await introspect.list_runs(RunFilter(limit=4))
    assert [r.id for r in newest] == ids[::-1][:4]
    older = await introspect.list_runs(RunFilter(limit=4, before_id=newest[-1].id))
    assert [r.id for r in older] == ids[::-1][4:]
    assert [r.id for r in await introspect.list_runs(RunFilter(queue="q"))] == ids[5::-2]
    assert await introspect.list_runs(RunFilter(state="dead")) == []
    assert len(await introspect.list_runs(RunFilter(name=flaky.name, state="queued"))) == 6


async def test_a_listing_finds_matches_past_a_thousand_newer_runs(
    harness: Harness, clock: FrozenClock
) -> None:
    """Redis walks an index in script steps of 1,000 runs at most: a page whose matches
    lie further down is filled across steps, and a search too."""
    old = [(await flaky.enqueue({"id": f"old{n}", "fail_times": 5})).job_id for n in range(3)]
    clock.advance("1s")
    newer = clock.now_ms()
    await flaky.enqueue_many([{"id": str(n)} for n in range(1_100)])
    introspect = harness.driver.introspect
    page = await introspect.list_runs(RunFilter(created_before_ms=newer, limit=2))
    assert [r.id for r in page] == old[:0:-1]
    rest = await introspect.list_runs(RunFilter(created_before_ms=newer, before_id=page[-1].id))
    assert [r.id for r in rest] == old[:1]
    found = await introspect.list_runs(RunFilter(input_contains='{"fail_times": 5}', limit=2))
    assert [r.id for r in found] == old[:0:-1]
    assert [r.id for r in await introspect.list_runs(RunFilter(key_prefix="flaky:old"))] == old[
        ::-1
    ]


async def test_a_dead_run_can_be_retried_with_fresh_attempts(harness: Harness) -> None:
    job_id = (await flaky.enqueue({"id": "a", "fail_times": 3})).job_id
    await harness.drain()
    introspect = harness.driver.introspect
    with pytest.raises(FerryError) as wrong:
        await introspect.cancel_run(job_id)
    assert wrong.value.code == "X_RUN_STATE"
    await introspect.retry_run(job_id)
    run = await introspect.get_run(job_id)
    assert run is not None and (run.summary.state, run.summary.attempts) == ("queued", 0)
    trace = await harness.drain()
    assert trace.outcomes(flaky) == ["retried", "retried", "dead"] * 2, "it ran all over again"


async def test_a_queued_run_can_be_cancelled_and_is_never_claimed(harness: Harness) -> None:
    job_id = (await flaky.enqueue({"id": "a"})).job_id
    introspect = harness.driver.introspect
    assert await introspect.cancel_run(job_id) == "cancelled"
    assert await harness.driver.claim(ClaimOptions("w", 30_000, 10)) == []
    run = await introspect.get_run(job_id)
    assert run is not None and run.summary.last_error is not None
    assert run.summary.last_error.code == "X_CANCELLED"
    with pytest.raises(FerryError) as wrong:
        await introspect.retry_run((await flaky.enqueue({"id": "b"})).job_id)
    assert wrong.value.code == "X_RUN_STATE"


async def test_an_unknown_run_id_is_refused(harness: Harness) -> None:
    with pytest.raises(FerryError) as missing:
        await harness.driver.introspect.retry_run("999999")
    assert missing.value.code == "X_RUN_NOT_FOUND"
    assert "999999" in missing.value.message
    assert await harness.driver.introspect.get_run("999999") is None


async def test_stats_count_every_state_per_queue(harness: Harness) -> None:
    await flaky.enqueue({"id": "a"})
    await flaky.enqueue({"id": "b", "fail_times": 9})
    await harness.drain()
    await harness.driver.introspect.pause_queue("idle")
    stats = {s.queue: s for s in await harness.driver.stats()}
    assert stats["default"].counts["completed"] == 1
    assert stats["default"].counts["dead"] == 1
    assert stats["default"].counts["queued"] == 0
    assert stats["idle"].paused is True


async def test_a_running_run_cancelled_by_an_operator_is_aborted_and_settled_cancelled(
    harness: Harness, clock: FrozenClock
) -> None:
    job_id = (await cooperative.enqueue({"org_id": "o"})).job_id
    [claimed] = await harness.driver.claim(ClaimOptions("w1", LEASE, 1))
    running = asyncio.create_task(
        execute_job(
            claimed,
            driver=harness.driver,
            worker_id="w1",
            lease_ms=LEASE,
            heartbeat_interval_ms=1_000,
        )
    )
    # Past its step (whose record a cancel would cut short), waiting on its signal.
    await eventually(lambda: effects["waiting"] == 1, what="the body to wait on its signal")
    introspect = harness.driver.introspect
    assert await introspect.cancel_run(job_id) == "running", "recorded, not yet settled"
    run = await introspect.get_run(job_id)
    assert run is not None and run.cancel_requested_at_ms == clock.now_ms()
    clock.advance("1s")  # the next heartbeat learns of the cancel
    report = await running
    assert effects["aborted:X_CANCELLED"] == 1, "the body heard the cancel on its signal"
    assert (report.outcome, report.code) == ("cancelled", "X_CANCELLED")
    run = await introspect.get_run(job_id)
    assert run is not None and run.summary.state == "cancelled"
    assert run.locked_by is None


async def test_a_cancel_requested_run_never_goes_back_to_the_queue(
    harness: Harness, clock: FrozenClock
) -> None:
    job_id = (await flaky.enqueue({"id": "a"})).job_id
    await harness.driver.claim(ClaimOptions("w1", LEASE, 1))
    introspect = harness.driver.introspect
    assert await introspect.cancel_run(job_id) == "running"
    clock.advance("1s")
    landed = await harness.driver.nack(
        job_id, NackOptions("w1", "retry", error=JobError("X_JOB_FAILED", "boom"))
    )
    assert landed
    run = await introspect.get_run(job_id)
    assert run is not None and run.summary.state == "cancelled"
    assert run.summary.last_error == JobError("X_CANCELLED", "cancelled by an operator")
    assert run.finished_at_ms == clock.now_ms()
    await introspect.retry_run(job_id)
    run = await introspect.get_run(job_id)
    assert run is not None and run.cancel_requested_at_ms is None, "a retry starts afresh"


async def test_list_runs_finds_running_runs_whose_lease_lapsed(
    harness: Harness, clock: FrozenClock
) -> None:
    stuck = (await flaky.enqueue({"id": "stuck"})).job_id
    await harness.driver.claim(ClaimOptions("w1", 2_000, 1))
    await flaky.enqueue({"id": "queued"})
    introspect = harness.driver.introspect
    assert await introspect.list_runs(RunFilter(lease_expired=True)) == []
    clock.advance("2s")
    assert [r.id for r in await introspect.list_runs(RunFilter(lease_expired=True))] == [stuck]


async def test_throughput_counts_completed_runs_per_queue_since_an_instant(
    harness: Harness, clock: FrozenClock
) -> None:
    await flaky.enqueue({"id": "early"})
    await harness.drain()
    since = clock.now_ms()
    clock.advance("1s")
    await flaky.enqueue({"id": "a"})
    await flaky.enqueue({"id": "b"}, queue="other")
    await flaky.enqueue({"id": "c", "fail_times": 9})
    await harness.drain()
    assert await harness.driver.introspect.throughput(since) == {"default": 1, "other": 1}
