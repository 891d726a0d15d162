"""The reads behind the dashboard's charts and sign-out, the same on every driver.

``outcome_series`` buckets ended runs per queue; ``recent_latencies`` lists the newest
ended runs with their due-to-done latency; dashboard sessions (on the driver's records) hold a
signed-out dashboard session refused until its cookie would have lapsed anyway.
"""

from __future__ import annotations

from ferry._admin.sessions import Sessions
from ferry._clock import FrozenClock
from ferry.drivers.protocol import (
    AckOptions,
    ClaimOptions,
    EnqueueRequest,
    JobDriver,
    JobError,
    NackOptions,
    OutcomeBucket,
)

LEASE = 60_000
MINUTE = 60_000


async def _run_to_end(
    driver: JobDriver, clock: FrozenClock, key: str, queue: str, *, wait_ms: int, dead: bool
) -> str:
    """Enqueue one run, let it wait ``wait_ms`` past due, then end it (completed or dead)."""
    result = await driver.enqueue(
        EnqueueRequest(name="chart", queue=queue, payload={}, idempotency_key=key, max_attempts=1)
    )
    clock.advance(f"{wait_ms}ms")
    [claimed] = await driver.claim(ClaimOptions(worker_id="w", lease_ms=LEASE, queues=[queue]))
    assert claimed.id == result.job_id
    if dead:
        error = JobError("X_BOOM", "boom")
        landed = await driver.nack(claimed.id, NackOptions("w", "dead", error=error))
    else:
        landed = await driver.ack(claimed.id, AckOptions("w"))
    assert landed
    return result.job_id


async def test_outcome_series_counts_ended_runs_per_queue_and_bucket(
    driver: JobDriver, clock: FrozenClock
) -> None:
    since = clock.now_ms()
    await _run_to_end(driver, clock, "a1", "a", wait_ms=10, dead=False)
    await _run_to_end(driver, clock, "a2", "a", wait_ms=10, dead=True)
    clock.advance("1m")
    await _run_to_end(driver, clock, "a3", "a", wait_ms=10, dead=False)
    await _run_to_end(driver, clock, "b1", "b", wait_ms=10, dead=False)
    queued = EnqueueRequest(
        name="chart", queue="a", payload={}, idempotency_key="q", max_attempts=1
    )
    await driver.enqueue(queued)  # a run that has not ended is in no bucket

    series = await driver.introspect.outcome_series(since, MINUTE)
    assert list(series) == [
        OutcomeBucket("a", since, completed=1, dead=1),
        OutcomeBucket("a", since + MINUTE, completed=1, dead=0),
        OutcomeBucket("b", since + MINUTE, completed=1, dead=0),
    ]
    later = await driver.introspect.outcome_series(since + MINUTE, MINUTE)
    assert [(b.queue, b.start_ms) for b in later] == [("a", since + MINUTE), ("b", since + MINUTE)]


async def test_outcome_series_starts_buckets_at_since_not_at_the_epoch(
    driver: JobDriver, clock: FrozenClock
) -> None:
    await _run_to_end(driver, clock, "a1", "a", wait_ms=0, dead=False)
    ended = clock.now_ms()
    [bucket] = await driver.introspect.outcome_series(ended - 7, 10)
    assert (bucket.start_ms, bucket.completed) == (ended - 7, 1)
    assert await driver.introspect.outcome_series(ended + 1, 10) == []


async def test_recent_latencies_are_the_newest_ended_runs_with_due_to_done_time(
    driver: JobDriver, clock: FrozenClock
) -> None:
    first = await _run_to_end(driver, clock, "a1", "a", wait_ms=250, dead=False)
    second = await _run_to_end(driver, clock, "a2", "a", wait_ms=40, dead=True)
    third = await _run_to_end(driver, clock, "b1", "b", wait_ms=5, dead=False)
    cancelled = await driver.enqueue(
        EnqueueRequest(name="chart", queue="a", payload={}, idempotency_key="c", max_attempts=1)
    )
    await driver.introspect.cancel_run(cancelled.job_id)  # cancelled runs are not latencies

    newest = await driver.introspect.recent_latencies(10)
    assert [(r.id, r.state, r.latency_ms) for r in newest] == [
        (third, "completed", 5),
        (second, "dead", 40),
        (first, "completed", 250),
    ]
    assert newest[0].queue == "b" and newest[0].name == "chart"
    assert newest[0].finished_at_ms == clock.now_ms()
    assert [r.id for r in await driver.introspect.recent_latencies(2)] == [third, second]
    assert await driver.introspect.recent_latencies(0) == []


async def test_a_revoked_session_is_refused_until_its_revocation_lapses(
    driver: JobDriver, clock: FrozenClock
) -> None:
    sessions = Sessions(driver)
    assert not await sessions.revoked("s1")
    await sessions.revoke("s1", until_ms=clock.now_ms() + MINUTE)
    await sessions.revoke("s1", until_ms=clock.now_ms() + 1)  # never shortens it
    assert await sessions.revoked("s1")
    assert not await sessions.revoked("s2")
    clock.advance("59s")
    assert await sessions.revoked("s1"), "the first, longer revocation holds"
    clock.advance("1s")
    assert not await sessions.revoked("s1"), "the cookie has lapsed by now anyway"
    await sessions.revoke("s2", until_ms=clock.now_ms() + MINUTE)
    assert await Sessions(driver).revoked("s2"), "every dashboard on the store sees it"


async def test_stats_report_when_the_longest_waiting_due_run_became_due(
    driver: JobDriver, clock: FrozenClock
) -> None:
    def request(key: str, run_at_ms: int | None = None) -> EnqueueRequest:
        return EnqueueRequest(
            name="chart", queue="a", payload={}, idempotency_key=key, max_attempts=1,
            run_at_ms=run_at_ms,
        )  # fmt: skip

    first_due = clock.now_ms()
    await driver.enqueue(request("due"))
    await driver.enqueue(request("later", run_at_ms=first_due + 3_600_000))  # not due yet
    clock.advance("90s")
    await driver.enqueue(request("newer"))
    [queue] = await driver.stats()
    assert (queue.queue, queue.oldest_due_at_ms) == ("a", first_due)
    await _run_to_end(driver, clock, "b1", "b", wait_ms=0, dead=False)
    by_queue = {q.queue: q for q in await driver.stats()}
    assert by_queue["b"].oldest_due_at_ms is None, "nothing waits on b"


async def test_stats_count_the_runs_due_now_and_not_the_ones_due_later(
    driver: JobDriver, clock: FrozenClock
) -> None:
    """``due`` is what waits for a worker at this instant — a queued run past its run_at and
    a sleeping run whose wake has come — never a delayed run, a sleeper still asleep, a
    running run or an ended one: what the autoscaler must not keep workers up for."""

    def request(key: str, run_at_ms: int | None = None) -> EnqueueRequest:
        return EnqueueRequest(
            name="chart", queue="a", payload={}, idempotency_key=key, max_attempts=1,
            run_at_ms=run_at_ms,
        )  # fmt: skip

    await _run_to_end(driver, clock, "ended", "a", wait_ms=0, dead=False)
    now = clock.now_ms()
    for key in ("sleeper", "napper", "runner", "ready-1", "ready-2"):
        await driver.enqueue(request(key))
    await driver.enqueue(request("later", run_at_ms=now + 3_600_000))
    sleeper, napper, runner = await driver.claim(
        ClaimOptions(worker_id="w", lease_ms=LEASE, queues=["a"], limit=3)
    )
    await driver.nack(sleeper.id, NackOptions("w", "sleep", run_at_ms=now + 60_000))
    await driver.nack(napper.id, NackOptions("w", "sleep", run_at_ms=now + 86_400_000))
    [queue] = await driver.stats()
    assert (queue.due, queue.counts["running"], queue.counts["completed"]) == (2, 1, 1)
    clock.advance("1m")
    [queue] = await driver.stats()
    assert queue.due == 3, "and the sleeper whose wake has come"
    assert runner.queue == "a"
