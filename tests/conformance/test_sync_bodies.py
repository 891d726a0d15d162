"""Sync bodies and sync steps: a ``def`` body runs on the worker's thread pool, a sync step
function runs off the event loop, and the signal, the timeout, the drain and the
abandonment at the deadline treat them exactly as async ones."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from support.waiting import eventually

from ferry import FerryError
from ferry._clock import FrozenClock
from ferry._jobs.execute import execute_job
from ferry._jobs.observer import ExecutionReport
from ferry._jobs.signal import AbortSignal
from ferry._jobs.threads import ThreadPool
from ferry.drivers.protocol import ClaimOptions
from ferry.testing import Harness

from . import jobs_fixture, jobs_sync
from .jobs_fixture import effects
from .jobs_sync import blocking_step, fulfil, sync_cooperative, sync_stubborn, warehouse

LEASE = 120_000
"""Longer than any timeout here, so no heartbeat falls due while a test jumps the clock."""


@pytest.fixture(autouse=True)
def _fresh() -> None:
    jobs_fixture.reset()
    jobs_sync.reset()
    warehouse.fail_next.clear()
    warehouse.shipped.clear()


def _loop_thread() -> str:
    return threading.current_thread().name


async def test_a_sync_body_runs_on_the_pool_and_retries_only_its_failed_step(
    harness: Harness, clock: FrozenClock
) -> None:
    warehouse.fail_next.add("o-1")
    result = await harness.run_jobs(fulfil, {"order_id": "o-1"})
    clock.advance("1h")
    trace = await harness.drain()
    assert trace.outcomes(fulfil) == ["slept", "retried", "completed"]
    assert trace.steps["reserve"].executions == 1, "replayed from storage"
    assert trace.steps["ship"].executions == 2, "only the failed step ran again"
    assert warehouse.shipped == ["o-1"]
    run = await harness.driver.introspect.get_run(result.job_id)
    assert run is not None and run.summary.state == "completed"
    assert run.result == {"bin": "reserve", "shipped": "o-1-shipped", "attempt": 2}
    assert [s.name for s in run.steps] == ["reserve", "cool-off", "ship"]
    loop_thread = _loop_thread()
    assert {what for what, _ in jobs_sync.threads} == {"body", "reserve", "ship"}
    assert all(thread != loop_thread for _, thread in jobs_sync.threads)
    assert all(thread.startswith("ferry-sync-") for _, thread in jobs_sync.threads)


async def test_a_sync_step_function_of_an_async_body_runs_off_the_loop(harness: Harness) -> None:
    result = await harness.run_jobs(blocking_step, {"order_id": "o-2"})
    run = await harness.driver.introspect.get_run(result.job_id)
    assert run is not None and run.result == "sync-step"
    [(what, thread)] = jobs_sync.threads
    assert what == "sync-step" and thread.startswith("ferry-sync-")
    assert thread != _loop_thread()


def _executing(harness: Harness, **options: Any) -> asyncio.Task[ExecutionReport]:
    """The one due run claimed and executed by worker w1, in the background."""

    async def execute() -> ExecutionReport:
        [claimed] = await harness.driver.claim(
            ClaimOptions(worker_id="w1", lease_ms=LEASE, limit=1)
        )
        return await execute_job(
            claimed, driver=harness.driver, worker_id="w1", lease_ms=LEASE, **options
        )

    return asyncio.create_task(execute())


async def test_a_sync_body_reads_its_signal_on_its_thread_and_stops_at_the_timeout(
    harness: Harness, clock: FrozenClock
) -> None:
    job_id = (await sync_cooperative.enqueue({"order_id": "o-3"})).job_id
    started = clock.now_ms()
    running = _executing(harness)
    await eventually(lambda: effects["before"] == 1, what="the body to block on its thread")
    await eventually(
        lambda: clock.next_deadline_ms() == started + 30_000, what="the timeout's timer"
    )
    clock.advance("30s")
    report = await running
    assert effects["aborted:X_TIMEOUT"] == 1, "the thread heard the abort before the verdict"
    assert (report.outcome, report.code) == ("retried", "X_TIMEOUT")
    assert report.duration_ms == 30_000
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.state == "queued"


async def test_a_sync_body_ignoring_its_timeout_is_abandoned_and_its_thread_stranded(
    harness: Harness, clock: FrozenClock
) -> None:
    job_id = (await sync_stubborn.enqueue({"order_id": "o-4"})).job_id
    jobs_sync.gates["stubborn"] = threading.Event()
    pool = ThreadPool(1)
    started = clock.now_ms()
    running = _executing(harness, threads=pool)
    await eventually(lambda: effects["before"] == 1, what="the body to block on its thread")
    await eventually(
        lambda: clock.next_deadline_ms() == started + 30_000, what="the timeout's timer"
    )
    clock.advance("30s")
    await eventually(
        lambda: clock.next_deadline_ms() == started + 35_000, what="the grace period's timer"
    )
    clock.advance("5s")
    report = await running
    assert (report.outcome, report.code) == ("dead", "X_TIMEOUT")
    assert report.duration_ms == 35_000, "abandoned at the deadline, as an async body is"
    assert pool.stranded == 1, "Python cannot stop the thread: it is stranded, and counted"

    jobs_sync.gates["stubborn"].set()  # the body returns long after its verdict
    await eventually(lambda: pool.stranded == 0, what="the stranded thread to return")
    assert effects["returned"] == 1
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.state == "dead"
    assert not run.steps, "a step after the abort is refused, never recorded"
    assert "after-the-deadline" not in {what for what, _ in jobs_sync.threads}
    pool.close()


async def test_a_drained_sync_body_is_interrupted_and_its_attempt_uncounted(
    harness: Harness,
) -> None:
    job_id = (await sync_cooperative.enqueue({"order_id": "o-5"})).job_id
    worker_signal = AbortSignal()
    running = _executing(harness, parent_signal=worker_signal)
    await eventually(lambda: effects["before"] == 1, what="the body to block on its thread")
    worker_signal.abort(FerryError("X_DRAINING", "worker w1 is draining (SIGTERM)", "none"))
    report = await running
    assert (report.outcome, report.code) == ("interrupted", "X_DRAINING")
    assert effects["aborted:X_DRAINING"] == 1
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and (run.summary.state, run.summary.attempts) == ("queued", 0)
