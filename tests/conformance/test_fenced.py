"""Honest accounting when the fence speaks, on every driver: a settle or a step write the
store refuses ends the attempt ``superseded`` (never ``completed`` or ``failed``), its
lapsed lease counts once however the worker learns of it, and the line it logs names who
holds the run now. Past its window an attempt sends nothing: no renewal, no settle (either
could land on a lease this worker took since, by claiming the run again). A renewal
statement the worker stopped waiting for is still answered.

Time is the frozen clock's. Another worker takes a run over through the driver's own
claim once the run's lease has expired on that clock, exactly as a second process would.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from support.waiting import eventually

from ferry._clock import FrozenClock
from ferry._jobs.declaration import JobHandle
from ferry._metrics import WorkerMetrics
from ferry._worker import JobWorker
from ferry.drivers._wake import IDLE_POLL_MAX_WAKE_PROVEN_MS
from ferry.drivers.protocol import (
    ClaimedJob,
    ClaimOptions,
    JobDriver,
    RecordWrite,
    Renewal,
    RenewalAnswer,
    Settle,
)
from ferry.testing import Harness

from . import jobs_fixture
from .jobs_fixture import effects, settled
from .jobs_worker import deaf, deaf_step, held, held_open, noop
from .started_worker import INTERVAL_MS, LEASE_MS, Outcomes, started

OTHER = "worker-b"
SLOW_RENEWALS_MS = 2 * LEASE_MS
"""A renewal interval longer than the lease: the lease lapses before the keeper looks, so
the first the worker hears of it is a write it is about to make (a step's, which the fence
refuses; a settle's, which it no longer sends) or its own claim taking the run again."""

LAPSED_THEN_REDELIVERED = {
    "lost": 1,
    "completed": 1,
    "superseded": None,
    "retried": None,
    "lease-lost": 1,
}
"""What ``counts`` reads when one attempt's lease lapsed (counted once, nothing of it
settled) and the run's next attempt completed it."""


@pytest.fixture(autouse=True)
def _fresh() -> None:
    jobs_fixture.reset()
    held.clear()


def lost_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """The ``jobs.lease.lost`` lines, as their fields."""
    return [r.__dict__ for r in caplog.records if r.getMessage() == "jobs.lease.lost"]


def counts(metrics: WorkerMetrics, job: str) -> dict[str, float | None]:
    """Leases lost on the default queue, and the job's attempts by outcome."""
    sample = metrics.registry.get_sample_value
    return {
        "lost": sample("job_leases_lost_total", {"queue": "default"}),
        **{
            outcome: sample("job_runs_total", {"queue": "default", "job": job, "outcome": outcome})
            for outcome in ("completed", "superseded", "retried", "lease-lost")
        },
    }


async def taken_over(driver: JobDriver, job_id: str) -> ClaimedJob:
    """Another worker claims ``job_id`` (its lease must have expired on the clock)."""
    [claimed] = await driver.claim(ClaimOptions(worker_id=OTHER, lease_ms=LEASE_MS, limit=1))
    assert claimed.id == job_id and claimed.attempt == 2
    return claimed


@asynccontextmanager
async def watched(
    driver: JobDriver, job: JobHandle[Any, Any], **options: Any
) -> AsyncIterator[tuple[JobWorker, Outcomes, WorkerMetrics]]:
    """A started worker for ``job`` (``options`` as ``started`` takes them), with what it
    reports and what it counts."""
    outcomes = Outcomes()
    metrics = WorkerMetrics(CollectorRegistry())
    async with started(driver, jobs=[job], observer=outcomes, metrics=metrics, **options) as worker:
        yield worker, outcomes, metrics


def renewing_too_slowly(
    driver: JobDriver, job: JobHandle[Any, Any]
) -> AbstractAsyncContextManager[tuple[JobWorker, Outcomes, WorkerMetrics]]:
    """A watched worker for ``job`` whose renewals come later than its lease lapses, busy
    with one run at a time (so it claims nothing itself while that lease lapses)."""
    return watched(driver, job, concurrency=1, heartbeat_interval_ms=SLOW_RENEWALS_MS)


def settles_sent(driver: JobDriver) -> list[str]:
    """The ids of the runs whose settles ``driver`` is sent from now on (by either path)."""
    sent: list[str] = []
    settle_many, settle_and_claim = driver.settle_many, driver.settle_and_claim

    async def many(settles: Sequence[Settle]) -> list[bool]:
        sent.extend(job_id for job_id, _ in settles)
        return await settle_many(settles)

    async def and_claim(
        settles: Sequence[Settle], options: ClaimOptions
    ) -> tuple[list[bool], list[ClaimedJob]]:
        sent.extend(job_id for job_id, _ in settles)
        return await settle_and_claim(settles, options)

    driver.settle_many = many  # type: ignore[method-assign]
    driver.settle_and_claim = and_claim  # type: ignore[method-assign]
    return sent


def renewals_sent(driver: JobDriver) -> list[str]:
    """The ids of the runs ``driver`` is asked to renew from now on."""
    sent: list[str] = []
    heartbeat_many = driver.heartbeat_many

    async def renewing(
        renewals: Sequence[Renewal], *, record: RecordWrite | None = None
    ) -> list[RenewalAnswer]:
        sent.extend(job_id for job_id, _ in renewals)
        return await heartbeat_many(renewals, record=record)

    driver.heartbeat_many = renewing  # type: ignore[method-assign]
    return sent


async def test_a_verdict_reached_after_the_window_closed_is_not_sent_and_the_lapse_counts_once(
    harness: Harness, driver: JobDriver, clock: FrozenClock, caplog: pytest.LogCaptureFixture
) -> None:
    sent = settles_sent(driver)
    caplog.set_level(logging.INFO, logger="ferry")
    async with renewing_too_slowly(driver, deaf) as (worker, outcomes, metrics):
        run = await deaf.enqueue({"id": "a"})
        await eventually(lambda: effects["deaf:started"] == 1, what="the body to start")
        clock.advance(LEASE_MS / 1000)  # the lease lapses, unrenewed
        await taken_over(driver, run.job_id)
        held["a"].set()  # the body completes after its window closed
        await eventually(lambda: worker.in_flight == 0, what="the attempt to end")
    [report] = outcomes.reports
    assert (report.outcome, report.code, report.landed) == ("lease-lost", "X_LEASE_LOST", False)
    assert run.job_id not in sent, "a settle past the window is never sent"
    assert outcomes.lost == [run.job_id], "the lapse is counted once"
    assert counts(metrics, "conformance.deaf") == {
        "lost": 1,
        "completed": None,
        "superseded": None,
        "retried": None,
        "lease-lost": 1,
    }
    assert settled == [], "on_settled hears the run's ending from the worker holding it now"
    [line] = lost_lines(caplog)
    assert line["levelname"] == "ERROR"
    assert {k: line.get(k) for k in ("job_id", "seen_by", "counted", "attempt")} == {
        "job_id": run.job_id,
        "seen_by": "renewal",
        "counted": True,
        "attempt": 1,
    }
    detail = await driver.introspect.get_run(run.job_id)
    assert detail is not None and detail.locked_by == OTHER and detail.summary.state == "running"


async def test_a_round_after_the_window_closed_renews_nothing_and_loses_the_lease_at_once(
    harness: Harness, driver: JobDriver, clock: FrozenClock
) -> None:
    sent = renewals_sent(driver)
    async with renewing_too_slowly(driver, held_open) as (_, outcomes, metrics):
        run = await held_open.enqueue({"id": "x"})
        await eventually(lambda: effects["held-open:started"] == 1, what="the body to start")
        clock.advance(SLOW_RENEWALS_MS / 1000)  # the first round falls due a window too late
        await eventually(lambda: outcomes.lost == [run.job_id], what="the lease to be lost")
        await eventually(
            lambda: effects["held-open:aborted:X_LEASE_LOST"] == 1, what="the body to stop"
        )
        await eventually(lambda: outcomes.reports, what="the attempt's report")
    assert sent == [], "no renewal goes out for a lease whose window has closed"
    assert outcomes.failed_renewals == [], "none was sent, so none failed"
    assert (outcomes.reports[0].attempt, outcomes.reports[0].outcome) == (1, "lease-lost")
    assert counts(metrics, "conformance.held-open")["lost"] == 1


def idle_poll_due(clock: FrozenClock) -> Callable[[], bool]:
    """Whether the worker waits for its idle poll (every driver's is at most
    ``IDLE_POLL_MAX_WAKE_PROVEN_MS``; no other timer of a worker is due that soon)."""
    return lambda: any(
        d - clock.now_ms() <= IDLE_POLL_MAX_WAKE_PROVEN_MS for d in clock.deadlines_ms()
    )


async def test_a_run_this_worker_claims_again_while_its_older_attempt_runs_settles_once(
    harness: Harness, driver: JobDriver, clock: FrozenClock, caplog: pytest.LogCaptureFixture
) -> None:
    """The fence is on the claimer, and here both attempts' claimer is this worker: only
    the worker can keep the older attempt, whose lease the store let lapse, from settling
    the run under the new attempt's lease."""
    caplog.set_level(logging.INFO, logger="ferry")
    slow = {"concurrency": 2, "heartbeat_interval_ms": SLOW_RENEWALS_MS}
    async with watched(driver, deaf, **slow) as (_, outcomes, metrics):
        run = await deaf.enqueue({"id": "a"})
        await eventually(lambda: effects["deaf:started"] == 1, what="the body to start")
        await eventually(idle_poll_due(clock), what="the worker to wait for its idle poll")
        clock.advance(LEASE_MS / 1000)  # the lease lapses, unrenewed; the idle poll is due
        await eventually(lambda: effects["deaf:started"] == 2, what="the claim to retake it")
        held["a"].set()  # both bodies complete, the older one deaf to its signal
        await eventually(lambda: len(outcomes.reports) == 2, what="both attempts' reports")
    assert sorted((r.attempt, r.outcome, r.landed) for r in outcomes.reports) == [
        (1, "lease-lost", False),
        (2, "completed", True),
    ]
    assert outcomes.lost == [run.job_id]
    assert counts(metrics, "conformance.deaf") == LAPSED_THEN_REDELIVERED
    assert [s.attempt for s in settled] == [2]
    [line] = lost_lines(caplog)
    assert (line["seen_by"], line["counted"], line["attempt"]) == ("reclaim", True, 1)
    assert line["claimed_again_as"] == 2
    detail = await driver.introspect.get_run(run.job_id)
    assert detail is not None
    assert (detail.summary.state, detail.summary.attempts) == ("completed", 2)


async def test_a_lease_that_lapses_while_its_settle_is_in_flight_is_counted_then_superseded(
    harness: Harness, driver: JobDriver, clock: FrozenClock, caplog: pytest.LogCaptureFixture
) -> None:
    sending = asyncio.Event()
    go = asyncio.Event()
    real = driver.settle_and_claim
    out_before: set[asyncio.Task[Any] | None] = set()

    async def stalled(
        settles: Sequence[Settle], options: ClaimOptions
    ) -> tuple[list[bool], list[ClaimedJob]]:
        # A partition between the worker and the store, from its settle on: that settle
        # waits, and so does every claim of the worker's after it (its own claim must not
        # take back the run whose lease lapses meanwhile); the other worker's goes through.
        if settles or (sending.is_set() and options.worker_id != OTHER):
            sending.set()
            await go.wait()
        elif options.worker_id != OTHER:
            # A claim of the worker's sent before the partition. Its statement carries
            # the time it was sent: still out when the clock moves, it could take the run
            # the other worker's claim has just put back in the queue (Postgres' ready
            # set), before that claim reads it. The clock moves once all have answered.
            out_before.add(asyncio.current_task())
        try:
            return await real(settles, options)
        finally:
            out_before.discard(asyncio.current_task())

    driver.settle_and_claim = stalled  # type: ignore[method-assign]
    caplog.set_level(logging.INFO, logger="ferry")
    async with watched(driver, deaf) as (_, outcomes, metrics):
        run = await deaf.enqueue({"id": "a"})
        await eventually(lambda: effects["deaf:started"] == 1, what="the body to start")
        held["a"].set()
        await eventually(
            lambda: sending.is_set() and not out_before,
            what="the settle to go out, and the claims sent before it to be answered",
        )
        clock.advance(LEASE_MS / 1000)  # a whole window, the settle unanswered
        await eventually(lambda: outcomes.lost == [run.job_id], what="the lapse to be counted")
        assert outcomes.reports == [], "the settle is still in flight"
        await taken_over(driver, run.job_id)
        go.set()  # the partition heals: the late settle reaches the fence
        await eventually(lambda: outcomes.reports, what="the attempt's report")
    assert [r.outcome for r in outcomes.reports] == ["superseded"]
    assert outcomes.lost == [run.job_id], "one lapse, counted once"
    assert counts(metrics, "conformance.deaf")["lost"] == 1
    assert counts(metrics, "conformance.deaf")["completed"] is None
    first, refused = lost_lines(caplog)
    assert (first["seen_by"], first["counted"], first.get("holder")) == ("renewal", True, None)
    assert (refused["seen_by"], refused["counted"], refused["holder"]) == ("settle", False, OTHER)


async def test_a_claim_answered_after_its_lease_lapsed_is_not_started_but_counted_and_redelivered(
    harness: Harness, driver: JobDriver, clock: FrozenClock, caplog: pytest.LogCaptureFixture
) -> None:
    real = driver.settle_and_claim
    answered_late: list[str] = []

    async def held_up(
        settles: Sequence[Settle], options: ClaimOptions
    ) -> tuple[list[bool], list[ClaimedJob]]:
        landed, claimed = await real(settles, options)
        if claimed and not answered_late:
            # The first claim's answer is held up on its way back (a partition, a stalled
            # server) for a whole window: the lease it took lapsed before it arrives.
            answered_late.extend(run.id for run in claimed)
            clock.advance(LEASE_MS / 1000)
        return landed, claimed

    driver.settle_and_claim = held_up  # type: ignore[method-assign]
    caplog.set_level(logging.INFO, logger="ferry")
    async with watched(driver, noop) as (_, outcomes, metrics):
        run = await noop.enqueue({"id": "a"})
        await eventually(lambda: len(outcomes.reports) == 2, what="the redelivered attempt")
    assert answered_late == [run.job_id]
    assert [(r.outcome, r.attempt, r.landed) for r in outcomes.reports] == [
        ("lease-lost", 1, False),
        ("completed", 2, True),
    ]
    assert effects["noop"] == 1, "the body ran once: on the redelivery, never on the late claim"
    assert outcomes.lost == [run.job_id]
    assert counts(metrics, "conformance.noop") == LAPSED_THEN_REDELIVERED
    [line] = lost_lines(caplog)
    assert (line["seen_by"], line["counted"], line["attempt"]) == ("claim", True, 1)
    detail = await driver.introspect.get_run(run.job_id)
    assert detail is not None
    assert (detail.summary.state, detail.summary.attempts) == ("completed", 2)


async def test_a_refused_step_write_ends_the_attempt_superseded_without_a_settle(
    harness: Harness, driver: JobDriver, clock: FrozenClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="ferry")
    async with renewing_too_slowly(driver, deaf_step) as (_, outcomes, metrics):
        run = await deaf_step.enqueue({"id": "a"})
        await eventually(lambda: effects["deaf-step:started"] == 1, what="the step to start")
        clock.advance(LEASE_MS / 1000)
        await taken_over(driver, run.job_id)
        held["a"].set()  # the step's function returns; its record meets the fence
        await eventually(lambda: outcomes.reports, what="the attempt's report")
    [report] = outcomes.reports
    assert (report.outcome, report.code) == ("superseded", "X_LEASE_LOST")
    assert counts(metrics, "conformance.deaf-step") == {
        "lost": 1,
        "completed": None,
        "superseded": 1,
        "retried": None,
        "lease-lost": None,
    }
    [line] = lost_lines(caplog)
    assert (line["seen_by"], line["refused"], line["holder"]) == ("step", 'step "work"', OTHER)
    assert not [r for r in caplog.records if r.getMessage() == "jobs.run.retrying"]
    detail = await driver.introspect.get_run(run.job_id)
    assert detail is not None and detail.locked_by == OTHER
    assert not detail.steps and detail.summary.last_error is None, "nothing of it was stored"


async def test_a_renewal_that_fails_after_the_keeper_gave_up_on_it_is_logged_not_left_to_asyncio(
    harness: Harness,
    driver: JobDriver,
    clock: FrozenClock,
    caplog: pytest.LogCaptureFixture,
    unretrieved: list[str],
) -> None:
    sent = asyncio.Event()
    fail = asyncio.Event()

    async def locked(
        renewals: Sequence[Renewal], *, record: RecordWrite | None = None
    ) -> list[RenewalAnswer]:
        if not renewals:
            return []  # an idle worker's beat: its presence alone, not what this test holds
        sent.set()
        await fail.wait()  # a lock held past the lease, then past the store's timeout
        raise RuntimeError("database is locked")

    driver.heartbeat_many = locked  # type: ignore[method-assign]
    outcomes = Outcomes()
    caplog.set_level(logging.INFO, logger="ferry")
    async with started(driver, jobs=[held_open], observer=outcomes):
        run = await held_open.enqueue({"id": "x"})
        await eventually(lambda: effects["held-open:started"] == 1, what="the body to start")
        clock.advance(INTERVAL_MS / 1000)
        await eventually(sent.is_set, what="the renewal to go out")
        clock.advance((LEASE_MS - INTERVAL_MS) / 1000)
        await eventually(lambda: outcomes.lost == [run.job_id], what="the lease to be lost")
        await eventually(lambda: outcomes.reports, what="the attempt's report")
        fail.set()  # the statement nobody waits for any more fails now

        def late() -> list[logging.LogRecord]:
            return [
                r
                for r in caplog.records
                if r.getMessage() == "jobs.heartbeat.failed" and getattr(r, "late", False)
            ]

        [line] = await eventually(late, what="the late failure to be logged")
    assert line.levelname == "WARNING" and "database is locked" in line.__dict__["error"]
    assert outcomes.reports[0].outcome == "lease-lost"
    gc.collect()
    assert unretrieved == []
