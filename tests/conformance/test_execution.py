"""execute_job: retries and backoff, dead letters, on_settled, timeouts, drain, concurrency."""

from __future__ import annotations

import asyncio

import pytest
from support.waiting import eventually

from ferry import FerryError
from ferry._clock import FrozenClock
from ferry._jobs.execute import execute_job
from ferry._jobs.observer import ExecutionReport
from ferry._jobs.signal import AbortSignal
from ferry.drivers.protocol import AckOptions, ClaimedJob, ClaimOptions, JobDriver, NackOptions
from ferry.testing import Harness

from . import jobs_fixture
from .jobs_fixture import effects, flaky, keyed, settled, strict
from .jobs_steps import (
    cooperative,
    drained_mid_step,
    gates,
    in_its_own_task,
    stubborn,
    unstoppable,
    unstoppable_ended,
)

LEASE = 120_000
"""Longer than any timeout here, so no heartbeat falls due while a test jumps the clock."""


@pytest.fixture(autouse=True)
def _fresh() -> None:
    jobs_fixture.reset()
    gates.clear()


async def claim_one(harness: Harness, worker: str = "w1") -> ClaimedJob:
    [claimed] = await harness.driver.claim(ClaimOptions(worker_id=worker, lease_ms=LEASE, limit=1))
    return claimed


async def execute(
    harness: Harness, claimed: ClaimedJob, worker: str = "w1", **kw: object
) -> ExecutionReport:
    return await execute_job(
        claimed,
        driver=harness.driver,
        worker_id=worker,
        lease_ms=LEASE,
        **kw,  # type: ignore[arg-type]
    )


async def test_a_failed_attempt_retries_with_exponential_backoff(
    harness: Harness, clock: FrozenClock
) -> None:
    job_id = (await flaky.enqueue({"id": "a", "fail_times": 2})).job_id
    start = clock.now_ms()
    first = await execute(harness, await claim_one(harness))
    assert (first.outcome, first.code) == ("retried", "X_JOB_FAILED")
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.run_at_ms == start + 1_000
    clock.advance("1s")
    await execute(harness, await claim_one(harness))
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.run_at_ms == start + 1_000 + 2_000
    clock.advance("2s")
    third = await execute(harness, await claim_one(harness))
    assert third.outcome == "completed"
    assert list(effects) == [
        "attempt:1:final=False",
        "attempt:2:final=False",
        "attempt:3:final=True",
    ]
    [ending] = settled
    assert (ending.outcome, ending.result, ending.attempt) == (
        "completed",
        {"id": "a", "attempt": 3},
        3,
    )


async def test_spent_attempts_dead_letter_the_run_and_settle_once(harness: Harness) -> None:
    job_id = (await flaky.enqueue({"id": "a", "fail_times": 9})).job_id
    trace = await harness.drain()
    assert trace.outcomes(flaky) == ["retried", "retried", "dead"]
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.state == "dead" and run.summary.attempts == 3
    assert run.summary.last_error is not None
    assert "planned failure 3" in run.summary.last_error.message
    [ending] = settled
    assert (ending.outcome, ending.code) == ("failed", "X_JOB_FAILED")
    assert ending.input is not None and ending.input.id == "a"


async def test_timeout_aborts_the_signal_before_failing_the_attempt(
    harness: Harness, clock: FrozenClock
) -> None:
    job_id = (await cooperative.enqueue({"org_id": "o"})).job_id
    started = clock.now_ms()
    running = asyncio.create_task(execute(harness, await claim_one(harness)))
    # Past its step (whose record a timeout would cut short), waiting on its signal.
    await eventually(lambda: effects["waiting"] == 1, what="the body to wait on its signal")
    clock.advance("29s")
    # Time moves only by advance, and none of it reached the timeout's timer: nothing woke.
    assert clock.next_deadline_ms() == started + 30_000, "the timeout is next, and not due"
    assert effects["aborted:X_TIMEOUT"] == 0
    clock.advance("1s")
    report = await running
    assert effects["aborted:X_TIMEOUT"] == 1, "the body heard the abort before the verdict"
    assert (report.outcome, report.code) == ("retried", "X_TIMEOUT")
    assert report.duration_ms == 30_000, "the verdict came at the timeout, not before"
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.state == "queued"


async def test_a_body_that_ignores_the_timeout_is_abandoned_after_the_grace_period(
    harness: Harness, clock: FrozenClock
) -> None:
    job_id = (await stubborn.enqueue({"org_id": "o"})).job_id
    started = clock.now_ms()
    running = asyncio.create_task(execute(harness, await claim_one(harness)))
    await eventually(
        lambda: clock.next_deadline_ms() == started + 30_000, what="the timeout's timer"
    )
    clock.advance("30s")
    # The defined point: the abort is out and the verdict waits on the grace period's timer.
    await eventually(
        lambda: clock.next_deadline_ms() == started + 35_000, what="the grace period's timer"
    )
    assert not running.done(), "the body gets a grace period after the abort"
    clock.advance("5s")
    report = await running
    assert (report.outcome, report.code) == ("dead", "X_TIMEOUT")
    assert report.duration_ms == 35_000, "abandoned only once the grace period ran out"
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.state == "dead"


async def test_a_body_that_swallows_the_cancel_is_given_up_and_its_late_end_changes_nothing(
    harness: Harness, clock: FrozenClock
) -> None:
    unstoppable_ended.clear()
    job_id = (await unstoppable.enqueue({"org_id": "o"})).job_id
    started = clock.now_ms()
    settles = _Recorded(harness.driver)
    running = asyncio.create_task(execute(harness, await claim_one(harness), settler=settles))
    await eventually(
        lambda: clock.next_deadline_ms() == started + 30_000, what="the timeout's timer"
    )
    clock.advance("30s")
    await eventually(
        lambda: clock.next_deadline_ms() == started + 35_000, what="the grace period's timer"
    )
    clock.advance("5s")
    report = await running  # the body is still going: it swallowed the cancel
    assert (report.outcome, report.code) == ("dead", "X_TIMEOUT")
    assert settles.sent == ["nack:dead"]
    gates["unstoppable"].set()  # the body ends after all, with a result
    await eventually(lambda: unstoppable_ended == ["o"], what="the given-up body to end")
    assert settles.sent == ["nack:dead"], "its ending sent no settle"
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.state == "dead" and run.result is None


class _Recorded:
    """The driver as a settler, recording each settle it is sent."""

    def __init__(self, driver: JobDriver) -> None:
        self._driver = driver
        self.sent: list[str] = []

    async def ack(self, job_id: str, options: AckOptions) -> bool:
        self.sent.append("ack")
        return await self._driver.ack(job_id, options)

    async def nack(self, job_id: str, options: NackOptions) -> bool:
        self.sent.append(f"nack:{options.outcome}")
        return await self._driver.nack(job_id, options)


async def test_a_body_runs_in_its_attempts_own_task(harness: Harness) -> None:
    job_id = (await in_its_own_task.enqueue({"org_id": "o"})).job_id
    report = await execute(harness, await claim_one(harness))
    assert report.outcome == "completed"
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.result is True, "asyncio.timeout cancelled the body's task"


async def test_a_drained_body_is_interrupted_uncounted_and_resumes_from_its_last_step(
    harness: Harness,
) -> None:
    job_id = (await drained_mid_step.enqueue({"org_id": "o"})).job_id
    gates["hold"] = asyncio.Event()
    worker_signal = AbortSignal()
    running = asyncio.create_task(
        execute(harness, await claim_one(harness), parent_signal=worker_signal)
    )
    await eventually(lambda: effects["second-started"] == 1, what="the second step to start")
    worker_signal.abort(FerryError("X_DRAINING", "worker w1 is draining (SIGTERM)", "none"))
    gates["hold"].set()  # the step's work finishes after the abort: it must not be recorded
    report = await running
    assert (report.outcome, report.code) == ("interrupted", "X_DRAINING")
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None
    assert (run.summary.state, run.summary.attempts) == ("queued", 0)
    assert [s.name for s in run.steps] == ["first"]
    del gates["hold"]
    resumed = await claim_one(harness, "w2")
    assert resumed.attempt == 1, "the interrupted attempt was not counted"
    assert (await execute(harness, resumed, "w2")).outcome == "completed"
    assert effects["first"] == 1 and effects["second-started"] == 2


async def test_a_worker_that_stops_waiting_settles_nothing_and_the_lease_lapses(
    harness: Harness, clock: FrozenClock
) -> None:
    job_id = (await drained_mid_step.enqueue({"org_id": "o"})).job_id
    gates["hold"] = asyncio.Event()
    running = asyncio.create_task(execute(harness, await claim_one(harness)))
    await eventually(lambda: effects["second-started"] == 1, what="the second step to start")
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.state == "running"
    clock.advance(LEASE / 1000)
    del gates["hold"]
    redelivered = await claim_one(harness, "w2")
    assert redelivered.attempt == 2, "an abandoned attempt counts"


async def test_a_busy_wait_slot_defers_the_run_uncounted_and_never_drops_it(
    harness: Harness, clock: FrozenClock
) -> None:
    assert harness.driver.slots is not None
    await harness.driver.slots.acquire(
        "conformance.keyed:shared", holder="x", limit=1, ttl_ms=LEASE
    )
    job_id = (await keyed.enqueue({"id": "a"})).job_id
    report = await execute(harness, await claim_one(harness))
    assert (report.outcome, report.code) == ("deferred", "X_CONCURRENCY_BUSY")
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and (run.summary.state, run.summary.attempts) == ("queued", 0)
    await harness.driver.slots.release("conformance.keyed:shared", holder="x")
    await harness.drain()
    done = await harness.driver.introspect.get_run(job_id)
    assert done is not None and done.summary.state == "completed"
    assert done.concurrency_key == "conformance.keyed:shared"
    assert await harness.driver.slots.holders("conformance.keyed:shared") == []


async def test_a_busy_fail_slot_fails_the_run_with_its_code(harness: Harness) -> None:
    assert harness.driver.slots is not None
    await harness.driver.slots.acquire("conformance.strict", holder="x", limit=1, ttl_ms=LEASE)
    job_id = (await strict.enqueue({"id": "a"})).job_id
    report = await execute(harness, await claim_one(harness))
    assert (report.outcome, report.code) == ("dead", "X_CONCURRENCY_BUSY")
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.state == "dead"
    [ending] = settled
    assert (ending.outcome, ending.code) == ("failed", "X_CONCURRENCY_BUSY")
    assert effects["strict:a"] == 0


async def test_a_run_of_an_undeclared_job_is_deferred_not_dropped(
    harness: Harness, clock: FrozenClock
) -> None:
    job_id = (await flaky.enqueue({"id": "a"})).job_id
    report = await execute(harness, await claim_one(harness), resolve=lambda name: None)
    assert (report.outcome, report.code) == ("deferred", "X_JOB_UNKNOWN")
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and (run.summary.state, run.summary.attempts) == ("queued", 0)


async def test_a_payload_that_no_longer_fits_the_schema_dead_letters_with_no_input(
    harness: Harness,
) -> None:
    from ferry.drivers.protocol import EnqueueRequest

    await harness.driver.enqueue(
        EnqueueRequest("conformance.flaky", "default", {"nope": 1}, "drift", 3)
    )
    report = await execute(harness, await claim_one(harness))
    assert (report.outcome, report.code) == ("dead", "X_VALIDATION")
    [ending] = settled
    assert ending.outcome == "failed" and ending.input is None
