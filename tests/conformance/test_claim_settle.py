"""Claims lease and count; settles are fenced on the claimer and say whether they landed."""

from __future__ import annotations

from ferry._clock import FrozenClock
from ferry.drivers.protocol import (
    AckOptions,
    ClaimOptions,
    HeartbeatOptions,
    JobDriver,
    JobError,
    NackOptions,
)
from ferry.testing import Harness

from .jobs_fixture import flaky, keyed

LEASE = 30_000


def claim(worker: str, limit: int = 10, **kw: object) -> ClaimOptions:
    return ClaimOptions(worker_id=worker, lease_ms=LEASE, limit=limit, **kw)  # type: ignore[arg-type]


async def test_claim_leases_the_run_and_counts_an_attempt(
    harness: Harness, clock: FrozenClock
) -> None:
    job_id = (await flaky.enqueue({"id": "a"})).job_id
    [claimed] = await harness.driver.claim(claim("w1"))
    assert claimed.id == job_id
    assert claimed.attempt == 1
    assert claimed.lease_expires_at_ms == clock.now_ms() + LEASE
    assert await harness.driver.claim(claim("w2")) == []
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.state == "running" and run.locked_by == "w1"


async def test_a_settle_from_a_worker_that_does_not_hold_the_run_changes_nothing(
    harness: Harness,
) -> None:
    job_id = (await flaky.enqueue({"id": "a"})).job_id
    await harness.driver.claim(claim("w1"))
    assert await harness.driver.ack(job_id, AckOptions("w2")) is False
    assert await harness.driver.nack(job_id, NackOptions("w2", "dead")) is False
    assert await harness.driver.heartbeat(job_id, HeartbeatOptions("w2", LEASE)) is False
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.state == "running"
    assert await harness.driver.ack(job_id, AckOptions("w1", {"ok": True})) is True
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.state == "completed" and run.result == {"ok": True}
    assert await harness.driver.ack(job_id, AckOptions("w1")) is False


async def test_an_expired_lease_is_taken_over_by_the_next_claim_and_fences_the_old_holder(
    harness: Harness, clock: FrozenClock
) -> None:
    job_id = (await flaky.enqueue({"id": "a"})).job_id
    await harness.driver.claim(claim("w1"))
    clock.advance(LEASE / 1000)
    [retaken] = await harness.driver.claim(claim("w2"))
    assert retaken.id == job_id
    assert retaken.attempt == 2, "a lapsed lease counts the attempt it cut short"
    assert await harness.driver.ack(job_id, AckOptions("w1")) is False
    assert await harness.driver.ack(job_id, AckOptions("w2")) is True


async def test_heartbeat_extends_the_lease(harness: Harness, clock: FrozenClock) -> None:
    job_id = (await flaky.enqueue({"id": "a"})).job_id
    await harness.driver.claim(claim("w1"))
    clock.advance("20s")
    assert await harness.driver.heartbeat(job_id, HeartbeatOptions("w1", LEASE)) is True
    clock.advance("20s")
    assert await harness.driver.claim(claim("w2")) == []
    assert await harness.driver.ack(job_id, AckOptions("w1")) is True


async def test_uncounted_settles_give_the_attempt_back(
    harness: Harness, clock: FrozenClock
) -> None:
    job_id = (await flaky.enqueue({"id": "a"})).job_id
    for outcome in ("interrupted", "sleep", "deferred"):
        [c] = await harness.driver.claim(claim("w1"))
        assert c.attempt == 1, outcome
        assert await harness.driver.nack(job_id, NackOptions("w1", outcome)) is True  # type: ignore[arg-type]
    [c] = await harness.driver.claim(claim("w1"))
    await harness.driver.nack(
        job_id, NackOptions("w1", "retry", clock.now_ms() + 1000, JobError("X_JOB_FAILED", "x"))
    )
    assert await harness.driver.claim(claim("w1")) == []
    clock.advance("1s")
    [c] = await harness.driver.claim(claim("w1"))
    assert c.attempt == 2
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None and run.summary.last_error == JobError("X_JOB_FAILED", "x")


async def test_claims_take_higher_priority_first_then_the_earliest_run_at(
    harness: Harness, clock: FrozenClock
) -> None:
    from .jobs_with_priority import urgent

    late = (await flaky.enqueue({"id": "late"})).job_id
    clock.advance("1s")
    await flaky.enqueue({"id": "later"})
    top = (await urgent.enqueue({"id": "top"})).job_id
    claimed = await harness.driver.claim(claim("w1", limit=2))
    assert [c.id for c in claimed] == [top, late]


async def test_a_retried_run_is_not_starved_by_newer_work(
    harness: Harness, clock: FrozenClock
) -> None:
    old = (await flaky.enqueue({"id": "old"})).job_id
    await harness.driver.claim(claim("w1", limit=1))
    await harness.driver.nack(old, NackOptions("w1", "retry", clock.now_ms() + 1000))
    clock.advance("1s")
    await flaky.enqueue_many([{"id": f"new{i}"} for i in range(5)])
    [first] = await harness.driver.claim(claim("w1", limit=1))
    assert first.id == old


async def test_claims_respect_queue_and_name_filters_and_paused_queues(
    harness: Harness,
) -> None:
    driver: JobDriver = harness.driver
    a = (await flaky.enqueue({"id": "a"})).job_id
    b = (await flaky.enqueue({"id": "b"}, queue="other")).job_id
    assert await driver.claim(claim("w", names=["nope"])) == []
    await driver.introspect.pause_queue("default")
    [only] = await driver.claim(claim("w"))
    assert only.id == b
    await driver.introspect.resume_queue("default")
    [after] = await driver.claim(claim("w", queues=["default"]))
    assert after.id == a
    stats = {s.queue: s for s in await driver.stats()}
    assert stats["default"].counts["running"] == 1
    assert stats["other"].counts["running"] == 1
    assert stats["default"].counts["completed"] == 0


async def test_a_claim_with_limits_takes_the_keys_slot_and_skips_a_full_key(
    harness: Harness,
) -> None:
    first = (await keyed.enqueue({"id": "a"})).job_id
    await keyed.enqueue({"id": "b"})
    limits = {keyed.name: 1}

    [claimed] = await harness.driver.claim(claim("w1", limits=limits))
    assert (claimed.id, claimed.slot_held) == (first, True)
    assert await harness.driver.claim(claim("w2", limits=limits)) == []  # the key is full


async def test_settle_and_claim_lands_the_settles_first_so_a_freed_slot_is_claimed_at_once(
    harness: Harness,
) -> None:
    first = (await keyed.enqueue({"id": "a"})).job_id
    second = (await keyed.enqueue({"id": "b"})).job_id
    limits = {keyed.name: 1}
    [claimed] = await harness.driver.claim(claim("w1", limits=limits))

    landed, next_batch = await harness.driver.settle_and_claim(
        [(claimed.id, AckOptions("w1"))], claim("w1", limits=limits)
    )

    assert landed == [True]
    assert [(c.id, c.slot_held) for c in next_batch] == [(second, True)]
    assert claimed.id == first
