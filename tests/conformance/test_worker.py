"""The started worker on every driver: settles carry the next claim, one renewal statement
per interval keeps every lease, a short backoff runs when it falls due, and no run leaves
anything of itself on the worker.

Time is the frozen clock's: the idle poll (seconds) never comes round unless a test moves
the clock that far, so a run that starts after a 200 ms advance was woken for, not polled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from prometheus_client import CollectorRegistry
from support.waiting import eventually

from ferry._clock import FrozenClock
from ferry._metrics import WorkerMetrics
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
from .jobs_fixture import effects
from .jobs_worker import held, held_open, noop, quick_retry
from .started_worker import INTERVAL_MS, LEASE_MS, Outcomes, started


@pytest.fixture(autouse=True)
def _fresh() -> None:
    jobs_fixture.reset()
    held.clear()


async def test_a_finished_run_frees_its_capacity_and_its_settle_carries_the_next_claim(
    harness: Harness, driver: JobDriver
) -> None:
    trips: list[tuple[list[str], int, list[str]]] = []
    real = driver.settle_and_claim

    async def recorded(
        settles: Sequence[Settle], options: ClaimOptions
    ) -> tuple[list[bool], list[ClaimedJob]]:
        landed, claimed = await real(settles, options)
        trips.append(([job_id for job_id, _ in settles], options.limit, [c.id for c in claimed]))
        return landed, claimed

    driver.settle_and_claim = recorded  # type: ignore[method-assign]
    first, second = await noop.enqueue_many([{"id": "a"}, {"id": "b"}])
    async with started(driver, jobs=[noop], concurrency=1):
        await eventually(lambda: len(trips) >= 3, what="len(trips) >= 3")
    a, b = first.job_id, second.job_id
    # One round trip per run: each settle travels with the claim of the next run, so the
    # run's capacity was free again before its settle landed.
    assert trips[:3] == [([], 1, [a]), ([a], 1, [b]), ([b], 1, [])]


async def test_the_next_claim_goes_out_while_the_last_trip_is_still_out(
    harness: Harness, driver: JobDriver
) -> None:
    real = driver.settle_and_claim
    answer_first = asyncio.Event()
    out: list[int] = []  # how many trips were out as each one left, itself included
    limits: list[int] = []
    in_flight = 0

    async def first_held(
        settles: Sequence[Settle], options: ClaimOptions
    ) -> tuple[list[bool], list[ClaimedJob]]:
        nonlocal in_flight
        in_flight += 1
        out.append(in_flight)
        limits.append(options.limit)
        try:
            if len(limits) == 1:
                await answer_first.wait()  # a slow answer: the first trip stays out
            return await real(settles, options)
        finally:
            in_flight -= 1

    driver.settle_and_claim = first_held  # type: ignore[method-assign]
    await noop.enqueue_many([{"id": str(n)} for n in range(4)])
    async with started(driver, jobs=[noop], concurrency=4):
        await eventually(lambda: len(limits) >= 2, what="a second trip")
        # Each trip claims its share of the concurrency, so the second went out with the
        # capacity the first could not fill, while the first was still out.
        assert limits[:2] == [2, 2] and out[:2] == [1, 2]
        answer_first.set()
        await eventually(lambda: effects["noop"] == 4, what="every run ran")


async def test_a_short_backoff_runs_when_it_falls_due_not_at_the_idle_poll(
    harness: Harness, driver: JobDriver, clock: FrozenClock
) -> None:
    async with started(driver, jobs=[quick_retry]):
        await quick_retry.enqueue({"id": "a"})
        retry_at = clock.now_ms() + 200
        # The first attempt failed, its retry landed, and the idle worker sleeps until the
        # retry is due — not until its idle poll, seconds later.
        await eventually(
            lambda: clock.next_deadline_ms() == retry_at,
            what="clock.next_deadline_ms() == retry_at",
        )
        assert (effects["quick-retry:1"], effects["quick-retry:2"]) == (1, 0)
        clock.advance("200ms")
        await eventually(lambda: effects["quick-retry:2"] == 1, what="effects[quick-retry:2] == 1")
    assert clock.now_ms() == retry_at


async def test_a_run_enqueued_for_later_wakes_an_idle_worker_when_it_falls_due(
    harness: Harness, driver: JobDriver, clock: FrozenClock
) -> None:
    async with started(driver, jobs=[noop]):
        wake = driver.wake()
        await eventually(
            lambda: wake.healthy, what="wake.healthy"
        )  # listening: the NOTIFY will be heard
        due_at = clock.now_ms() + 200
        await noop.enqueue({"id": "later"}, delay="200ms")
        await eventually(
            lambda: clock.next_deadline_ms() == due_at, what="clock.next_deadline_ms() == due_at"
        )
        assert effects["noop"] == 0
        clock.advance("200ms")
        await eventually(lambda: effects["noop"] == 1, what="effects[noop] == 1")


async def test_no_run_leaves_a_listener_on_the_worker_signal(
    harness: Harness, driver: JobDriver
) -> None:
    await noop.enqueue_many([{"id": f"run-{n}"} for n in range(1_000)])
    async with started(driver, jobs=[noop, held_open], concurrency=32) as worker:
        await held_open.enqueue({"id": "held"})
        await eventually(
            lambda: effects["held-open:started"] == 1, what="effects[held-open:started] == 1"
        )
        assert worker.signal.listener_count >= 1, "a running run follows the worker's signal"
        await eventually(
            lambda: effects["noop"] == 1_000, what="effects[noop] == 1_000", within_s=120
        )
        held["held"].set()
        await eventually(lambda: worker.in_flight == 0, what="worker.in_flight == 0")
        assert worker.signal.listener_count == 0, "no run that ended still listens"


async def test_one_statement_per_interval_renews_every_held_lease(
    harness: Harness, driver: JobDriver, clock: FrozenClock
) -> None:
    statements: list[int] = []
    real = driver.heartbeat_many

    async def counted(
        renewals: Sequence[Renewal], *, record: RecordWrite | None = None
    ) -> list[RenewalAnswer]:
        answers = await real(renewals, record=record)
        if renewals:  # (an idle worker's beats carry its presence alone)
            statements.append(len(renewals))
        return answers

    driver.heartbeat_many = counted  # type: ignore[method-assign]
    async with started(driver, jobs=[held_open], concurrency=5):
        runs = await held_open.enqueue_many([{"id": f"r{n}"} for n in range(5)])
        await eventually(
            lambda: effects["held-open:started"] == 5, what="effects[held-open:started] == 5"
        )
        for rounds in ([5], [5, 5]):
            clock.advance(INTERVAL_MS / 1000)
            await eventually(lambda: statements == rounds, what="statements == rounds")  # noqa: B023 (checked at once)
            # Answered, and the next round is armed an interval on.
            await eventually(
                lambda: clock.next_deadline_ms() == clock.now_ms() + INTERVAL_MS,
                what="clock.next_deadline_ms() == clock.now_ms() + INTERVAL_MS",
            )
        for run in runs:
            detail = await driver.introspect.get_run(run.job_id)
            assert detail is not None and detail.lease_expires_at_ms == clock.now_ms() + LEASE_MS


async def test_one_failed_renewal_is_a_warning_and_a_window_of_them_loses_the_lease(
    harness: Harness, driver: JobDriver, clock: FrozenClock
) -> None:
    async def refused(
        renewals: Sequence[Renewal], *, record: RecordWrite | None = None
    ) -> list[RenewalAnswer]:
        raise ConnectionError("connection reset by peer")

    driver.heartbeat_many = refused  # type: ignore[method-assign]
    outcomes = Outcomes()
    metrics = WorkerMetrics(CollectorRegistry())
    async with started(driver, jobs=[held_open], observer=outcomes, metrics=metrics):
        run = await held_open.enqueue({"id": "x"})
        await eventually(
            lambda: effects["held-open:started"] == 1, what="effects[held-open:started] == 1"
        )
        clock.advance(INTERVAL_MS / 1000)
        await eventually(
            lambda: len(outcomes.failed_renewals) == 1, what="len(outcomes.failed_renewals) == 1"
        )
        assert outcomes.lost == [], "the window still has room for the next renewal"
        clock.advance((LEASE_MS - INTERVAL_MS) / 1000)
        await eventually(
            lambda: outcomes.lost == [run.job_id], what="outcomes.lost == [run.job_id]"
        )
        await eventually(
            lambda: effects["held-open:aborted:X_LEASE_LOST"] == 1,
            what="effects[held-open:aborted:X_LEASE_LOST] == 1",
        )
        await eventually(
            lambda: [r.outcome for r in outcomes.reports] == ["lease-lost"],
            what="[r.outcome for r in outcomes.reports] == [lease-lost]",
        )
    assert "ConnectionError: connection reset by peer" in outcomes.failed_renewals[0]
    lost = metrics.registry.get_sample_value("job_leases_lost_total", {"queue": "default"})
    assert lost == 1


async def test_a_renewal_that_hangs_for_a_whole_window_loses_the_lease_like_one_that_fails(
    harness: Harness, driver: JobDriver, clock: FrozenClock
) -> None:
    sent: list[int] = []
    never = asyncio.Event()

    async def hanging(
        renewals: Sequence[Renewal], *, record: RecordWrite | None = None
    ) -> list[RenewalAnswer]:
        if renewals:  # (an idle worker's beats carry its presence alone)
            sent.append(len(renewals))
        await never.wait()  # a stalled connection: no answer, no error
        return []

    driver.heartbeat_many = hanging  # type: ignore[method-assign]
    outcomes = Outcomes()
    try:
        async with started(driver, jobs=[held_open], observer=outcomes):
            run = await held_open.enqueue({"id": "x"})
            await eventually(
                lambda: effects["held-open:started"] == 1, what="effects[held-open:started] == 1"
            )
            clock.advance(INTERVAL_MS / 1000)
            await eventually(lambda: sent == [1], what="sent == [1]")
            assert outcomes.lost == []
            clock.advance((LEASE_MS - INTERVAL_MS) / 1000)  # the window since the claim closes
            await eventually(
                lambda: outcomes.lost == [run.job_id], what="outcomes.lost == [run.job_id]"
            )
            await eventually(
                lambda: effects["held-open:aborted:X_LEASE_LOST"] == 1,
                what="effects[held-open:aborted:X_LEASE_LOST] == 1",
            )
        assert outcomes.failed_renewals == [f"renewal still unanswered after {LEASE_MS} ms"]
    finally:
        never.set()


async def test_a_renewal_that_answers_late_holds_the_lease_from_when_it_was_sent(
    harness: Harness, driver: JobDriver, clock: FrozenClock
) -> None:
    """The store's lease runs from the renewal's sending (the worker's clock set it there),
    so the worker's window does too: a renewal answered late leaves less of it."""
    real = driver.heartbeat_many
    answer = asyncio.Event()
    sent: list[int] = []

    async def late_then_refused(
        renewals: Sequence[Renewal], *, record: RecordWrite | None = None
    ) -> list[RenewalAnswer]:
        if not renewals:
            return []  # an idle worker's beat carries its presence alone
        sent.append(clock.now_ms())
        if len(sent) > 1:
            raise ConnectionError("connection reset by peer")
        landed = await real(renewals, record=record)
        await answer.wait()  # its answer is held up on the way back
        return landed

    driver.heartbeat_many = late_then_refused  # type: ignore[method-assign]
    outcomes = Outcomes()

    async def next_round_due() -> None:
        due = clock.now_ms() + INTERVAL_MS
        await eventually(lambda: due in clock.deadlines_ms(), what="the next renewal to fall due")

    async with started(driver, jobs=[held_open], observer=outcomes):
        run = await held_open.enqueue({"id": "x"})
        await eventually(lambda: effects["held-open:started"] == 1, what="the body to start")
        clock.advance(INTERVAL_MS / 1000)
        await eventually(lambda: len(sent) == 1, what="the first renewal to go out")
        clock.advance(1.5 * INTERVAL_MS / 1000)  # still within the claim's window
        answer.set()  # it lands, 15 s after it was sent
        await next_round_due()
        clock.advance(INTERVAL_MS / 1000)
        await eventually(lambda: len(outcomes.failed_renewals) == 1, what="a failed renewal")
        assert outcomes.lost == [], "a lease from the landed renewal's sending has room"
        await next_round_due()
        clock.advance(INTERVAL_MS / 1000)  # a lease since it was sent; 20 s since it answered
        await eventually(lambda: outcomes.lost == [run.job_id], what="the lease to be lost")
    assert clock.now_ms() - sent[0] == LEASE_MS + 5_000
