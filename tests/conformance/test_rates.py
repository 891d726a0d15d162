"""Rate limits on every driver: at most ``limit`` starts of one key in any interval of
length ``per``, the limit reached under a burst, a run over it deferred by the claim (never
leased, no attempt counted), and other keys and jobs never slowed.

The frozen clock makes "any interval" checkable: every start is recorded at its instant,
and every window ``[s, s + per)`` beginning at a start is counted."""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry
from pydantic import BaseModel

from ferry import RateLimit, job
from ferry._clock import FrozenClock
from ferry._metrics.catalog import WorkerMetrics
from ferry._worker import JobWorker
from ferry.drivers.protocol import ClaimOptions, JobDriver, RetentionPolicy
from ferry.drivers.rates import RateWindow
from ferry.testing import Harness

LEASE = 30_000
PER_MS = 1_000

started: list[tuple[int, str, str]] = []
"""(instant, account, run id) of every body start, on the test's frozen clock."""


class Call(BaseModel):
    id: str
    account: str


@job(
    input=Call,
    idempotency_key=lambda i: f"rated:{i.id}",
    rate=RateLimit(limit=5, per="1s", key=lambda i: i.account),
    name="conformance.rated",
)
async def rated_call(input: Call) -> None:
    started.append((clock_now(), input.account, input.id))


@job(input=Call, idempotency_key=lambda i: f"unrated:{i.id}", name="conformance.unrated")
async def unrated_call(input: Call) -> None:
    started.append((clock_now(), "unrated", input.id))


_clock: list[FrozenClock] = []


def clock_now() -> int:
    return _clock[-1].now_ms()


def busiest_window(instants: Sequence[int], per_ms: int) -> int:
    """The most instants in any ``[s, s + per_ms)``; checking the windows that begin at an
    instant is enough, since any window can slide right to its first instant."""
    ordered = sorted(instants)
    return max(
        (sum(1 for t in ordered if s <= t < s + per_ms) for s in ordered),
        default=0,
    )


def rated_options(limit: int = 10, *, rates: tuple[int, int] = (5, PER_MS)) -> ClaimOptions:
    return ClaimOptions(
        "w1", LEASE, limit=limit, names=["conformance.rated"], rates={"conformance.rated": rates}
    )


async def test_a_burst_starts_at_most_limit_per_interval_and_reaches_it(
    harness: Harness, clock: FrozenClock
) -> None:
    _clock.append(clock)
    started.clear()
    t0 = clock.now_ms()
    for n in range(23):
        await rated_call.enqueue({"id": f"a{n}", "account": "a"})
    for n in range(3):
        await rated_call.enqueue({"id": f"b{n}", "account": "b"})
        await unrated_call.enqueue({"id": f"u{n}", "account": "-"})

    trace = await harness.drain()

    a = [t - t0 for t, account, _ in started if account == "a"]
    assert len(a) == 23 and busiest_window(a, PER_MS) == 5
    # Reached: five starts in each second of the burst, the last three in the fifth.
    assert [sum(1 for t in a if k * PER_MS <= t < (k + 1) * PER_MS) for k in range(5)] == [
        5,
        5,
        5,
        5,
        3,
    ]
    # Other keys and other jobs are not slowed.
    assert [t - t0 for t, account, _ in started if account in ("b", "unrated")] == [0] * 6
    # Never an attempt counted, never dropped: every run completed on its first attempt.
    runs = trace.enqueued(rated_call)
    assert len(runs) == 26
    assert {(run.state, run.attempts) for run in runs} == {("completed", 1)}
    assert {r.outcome for r in trace.reports} == {"completed"}


async def test_the_window_slides_it_is_not_fixed(driver: JobDriver, clock: FrozenClock) -> None:
    """Starts at 0 and 900 ms fill a limit of 2 per second: at 1000 ms one more may start
    (the one at 0 left the window), not two as a window fixed at whole seconds would let."""
    harness = Harness(driver=driver, clock=clock, tasks=[])
    with harness.installed():
        t0 = clock.now_ms()
        await rated_call.enqueue({"id": "1", "account": "a"})
        [first] = await driver.claim(rated_options(rates=(2, PER_MS)))
        assert first.rate_deferred_until_ms is None
        clock.set(t0 + 900)
        await rated_call.enqueue({"id": "2", "account": "a"})
        [second] = await driver.claim(rated_options(rates=(2, PER_MS)))
        assert second.rate_deferred_until_ms is None
        clock.set(t0 + 1_000)
        for n in (3, 4):
            await rated_call.enqueue({"id": str(n), "account": "a"})
        third, fourth = await driver.claim(rated_options(rates=(2, PER_MS)))
        assert third.rate_deferred_until_ms is None
        assert fourth.rate_deferred_until_ms == t0 + 1_900


async def test_a_run_over_its_limit_is_queued_again_not_leased(
    driver: JobDriver, clock: FrozenClock
) -> None:
    harness = Harness(driver=driver, clock=clock, tasks=[])
    with harness.installed():
        now = clock.now_ms()
        ids = [(await rated_call.enqueue({"id": str(n), "account": "a"})).job_id for n in range(3)]
        answered = await driver.claim(rated_options(rates=(2, 60_000)))
    assert [r.id for r in answered] == ids
    assert [r.rate_deferred_until_ms for r in answered] == [None, None, now + 60_000]
    assert driver.introspect is not None
    waiting = await driver.introspect.get_run(ids[2])
    assert waiting is not None
    assert (waiting.summary.state, waiting.summary.attempts, waiting.locked_by) == (
        "queued",
        0,
        None,
    )
    assert waiting.summary.run_at_ms == waiting.rate_deferred_until_ms == now + 60_000
    assert waiting.rate_key == "conformance.rated:a"
    # Not due until then: the next claim leaves it where it is.
    assert await driver.claim(rated_options(rates=(2, 60_000))) == []


async def test_a_backlog_is_spread_over_the_windows_once(
    driver: JobDriver, clock: FrozenClock
) -> None:
    """A run deferred behind a full window is due when the window, with every earlier
    deferral started on time, has room: 2 per second and 7 runs over the limit are due at
    1 s, 1 s, 2 s, 2 s, 3 s, 3 s and 4 s — each deferred once, not all woken at 1 s."""
    harness = Harness(driver=driver, clock=clock, tasks=[])
    with harness.installed():
        t0 = clock.now_ms()
        for n in range(9):
            await rated_call.enqueue({"id": str(n), "account": "a"})
        answered = []
        for _ in range(3):  # three claims of three, as a worker's trips would
            answered += await driver.claim(rated_options(limit=3, rates=(2, PER_MS)))
    deferred = [r.rate_deferred_until_ms for r in answered if r.rate_deferred_until_ms]
    assert [d - t0 for d in deferred] == [1_000, 1_000, 2_000, 2_000, 3_000, 3_000, 4_000]


async def test_the_window_is_kept_per_key_and_pruned_once_it_is_empty(
    driver: JobDriver, clock: FrozenClock
) -> None:
    harness = Harness(driver=driver, clock=clock, tasks=[])
    with harness.installed():
        now = clock.now_ms()
        await rated_call.enqueue({"id": "1", "account": "a"})
        await driver.claim(rated_options())
    rates = driver.rates  # type: ignore[attr-defined]
    assert await rates.window("conformance.rated:a") == RateWindow((now,), (now,))
    assert await rates.window("conformance.rated:nobody") == RateWindow()
    keep = RetentionPolicy(completed_ms=None, dead_ms=None, published_outbox_ms=None)
    assert (await driver.prune(keep)).rates == 0
    clock.advance(PER_MS)
    assert (await driver.prune(keep)).rates == 1
    assert await rates.window("conformance.rated:a") == RateWindow()


async def test_the_worker_counts_each_deferral_and_runs_none_of_them(
    driver: JobDriver, clock: FrozenClock
) -> None:
    _clock.append(clock)
    started.clear()
    registry = CollectorRegistry()
    metrics = WorkerMetrics(registry)
    worker = JobWorker(driver=driver, jobs=[rated_call], concurrency=10, metrics=metrics)
    harness = Harness(driver=driver, clock=clock, tasks=[])
    with harness.installed():
        for n in range(7):
            await rated_call.enqueue({"id": str(n), "account": "a"})
        assert await worker.run_due() == 7
    assert len(started) == 5
    counted = registry.get_sample_value("job_rate_limited_total", {"job": "conformance.rated"})
    assert counted == 2
