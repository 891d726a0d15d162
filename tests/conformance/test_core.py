"""The core, through core members only, on every driver and on one that offers nothing
else (``support.core_only``): enqueue, the batched claim / settle / renewal path, steps,
stats, retention, the migration ledger, and the worker's real path on top. A driver that
passes these runs jobs; everything else it may offer is a capability."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from support.core_only import CoreOnlyDriver
from support.drivers import DRIVERS, built

from ferry import set_job_driver
from ferry._clock import FrozenClock
from ferry._worker import JobWorker
from ferry.drivers.protocol import (
    AckOptions,
    ClaimOptions,
    EnqueueRequest,
    HeartbeatOptions,
    JobDriver,
    NackOptions,
    RetentionPolicy,
    StepRecord,
)

from .jobs_worker import noop

LEASE = 30_000


@pytest.fixture(params=[*DRIVERS, "core-only"])
async def core(request: pytest.FixtureRequest, clock: FrozenClock) -> AsyncIterator[JobDriver]:
    """A fresh driver of each kind, and the core-only one, on the test's frozen clock."""
    if request.param == "core-only":
        driver = CoreOnlyDriver(clock)
        yield driver
        await driver.close()
        return
    async with built(request.param, request, clock) as each:
        yield each


def request(key: str, queue: str = "q") -> EnqueueRequest:
    return EnqueueRequest(
        name="j", queue=queue, payload={"k": key}, idempotency_key=key, max_attempts=3
    )


def claim(worker: str, limit: int = 10) -> ClaimOptions:
    return ClaimOptions(worker_id=worker, lease_ms=LEASE, limit=limit)


async def counts(driver: JobDriver, queue: str = "q") -> dict[str, int]:
    return {
        state: n
        for stats in await driver.stats()
        if stats.queue == queue
        for state, n in stats.counts.items()
        if n
    }


async def test_enqueue_is_idempotent_one_by_one_and_in_batches(core: JobDriver) -> None:
    await core.open()
    first = await core.enqueue(request("a"))
    again = await core.enqueue(request("a"))
    assert (again.job_id, again.deduplicated, first.deduplicated) == (first.job_id, True, False)
    batch = await core.enqueue_many([request("b"), request("a"), request("c")])
    assert [r.deduplicated for r in batch] == [False, True, False]
    assert batch[1].job_id == first.job_id
    assert await counts(core) == {"queued": 3}


async def test_claims_lease_count_and_settles_are_fenced_on_the_claimer(
    core: JobDriver, clock: FrozenClock
) -> None:
    job_id = (await core.enqueue(request("a"))).job_id
    [claimed] = await core.claim(claim("w1"))
    assert (claimed.id, claimed.attempt) == (job_id, 1)
    assert await core.claim(claim("w2")) == []
    assert await core.heartbeat(job_id, HeartbeatOptions("w1", LEASE))
    assert not await core.ack(job_id, AckOptions("w2")), "not its claim"
    clock.advance("29s")
    assert await core.claim(claim("w2")) == [], "the renewal moved the lease on"
    clock.advance("1s")
    [retaken] = await core.claim(claim("w2"))
    assert retaken.attempt == 2, "a lapsed lease counts the attempt"
    assert not await core.ack(job_id, AckOptions("w1")), "the old holder is fenced"
    assert await core.settle_many([(job_id, AckOptions("w2")), (job_id, AckOptions("w2"))]) == [
        True,
        False,
    ]
    assert await counts(core) == {"completed": 1}


async def test_settle_and_claim_lands_the_settles_then_claims(core: JobDriver) -> None:
    ids = {r.job_id for r in await core.enqueue_many([request("a"), request("b")])}
    [first] = await core.claim(claim("w", limit=1))
    landed, [second] = await core.settle_and_claim(
        [(first.id, NackOptions("w", "interrupted"))], claim("w", limit=1)
    )
    assert landed == [True]
    landed, [third] = await core.settle_and_claim(
        [(second.id, AckOptions("w"))], claim("w", limit=1)
    )
    assert landed == [True] and {second.id, third.id} == ids
    assert (second.attempt, third.attempt) == (1, 1), "an interrupted attempt is given back"
    assert await counts(core) == {"completed": 1, "running": 1}


async def test_steps_are_recorded_only_by_the_holder_and_read_back(
    core: JobDriver, clock: FrozenClock
) -> None:
    job_id = (await core.enqueue(request("a"))).job_id
    step = StepRecord("load", "run", {"rows": 3}, clock.now_ms(), clock.now_ms())
    assert not await core.steps.record(job_id, step, worker_id="w"), "not claimed yet"
    await core.claim(claim("w"))
    assert await core.steps.record(job_id, step, worker_id="w")
    assert not await core.steps.record(job_id, step, worker_id="other")
    assert (await core.steps.load(job_id))["load"].result == {"rows": 3}


async def test_step_results_come_back_exactly_in_the_order_the_steps_ran(
    core: JobDriver, clock: FrozenClock
) -> None:
    """Values a JSON decoder on the way could change (digits past a double's, an empty list
    that could turn into an object, text that looks like the step's own fields) and a
    sleep that a later record of its name replaces."""
    job_id = (await core.enqueue(request("a"))).job_id
    await core.claim(claim("w"))
    now = clock.now_ms()
    results = {
        "big": [2**70, -(2**63), 0.1],
        "empty": {"list": [], "object": {}, "text": ""},
        "tricky": ',"started_at_ms":1,"finished_at_ms":2,"wake_at_ms":3}é\u2028"',
    }
    for offset, (name, result) in enumerate(reversed(results.items())):
        step = StepRecord(name, "run", result, now - offset, now)
        assert await core.steps.record(job_id, step, worker_id="w")
    nap = StepRecord("nap", "sleep", None, now + 1, now + 1, wake_at_ms=now + 9)
    assert await core.steps.record(job_id, nap, worker_id="w")
    woke = StepRecord("nap", "run", ["woke"], now + 1, now + 2)
    assert await core.steps.record(job_id, woke, worker_id="w")
    assert await core.steps.record(job_id, StepRecord("nap", "run", 0, now, now), worker_id="w")
    loaded = await core.steps.load(job_id)
    assert list(loaded) == ["big", "empty", "tricky", "nap"]
    assert {name: loaded[name].result for name in results} == results
    assert loaded["nap"] == woke, "a run record replaces a sleep once, then is kept"


async def test_prune_deletes_finished_runs_past_their_retention(
    core: JobDriver, clock: FrozenClock
) -> None:
    job_id = (await core.enqueue(request("a"))).job_id
    await core.claim(claim("w"))
    assert await core.ack(job_id, AckOptions("w"))
    clock.advance("2d")
    report = await core.prune(
        RetentionPolicy(completed_ms=86_400_000, dead_ms=None, published_outbox_ms=None)
    )
    assert report.completed == 1
    assert await counts(core) == {}


async def test_the_worker_runs_a_job_enqueued_through_the_facade(core: JobDriver) -> None:
    previous = set_job_driver(core)
    try:
        await noop.enqueue({"id": "core"})
        worker = JobWorker(driver=core, jobs=[noop], worker_id="w")
        assert await worker.run_due() == 1
        await worker.close()
    finally:
        set_job_driver(previous)
    assert await counts(core, "default") == {"completed": 1}


async def test_the_migration_ledger_is_current_after_open(core: JobDriver) -> None:
    await core.open()
    assert await core.migrate() == []
    _, ledger = await core.inspect()
    assert (ledger.pending, ledger.problem) == ((), None)
