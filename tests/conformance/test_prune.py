"""Retention: prune deletes what each retention lets go, in bounded batches, and keeps
everything younger — the same on every driver."""

from __future__ import annotations

from ferry._clock import FrozenClock
from ferry.drivers.protocol import (
    AckOptions,
    ClaimOptions,
    EnqueueRequest,
    JobDriver,
    NackOptions,
    RetentionPolicy,
    RunFilter,
    StepRecord,
)

from .conftest import Append

DAY = 86_400_000
WEEK = 7 * DAY
RETAIN = RetentionPolicy(completed_ms=WEEK, dead_ms=30 * DAY, published_outbox_ms=DAY, batch=10)


def send(key: str) -> EnqueueRequest:
    return EnqueueRequest("prune.send", "default", {"key": key}, key, max_attempts=3)


async def finish(driver: JobDriver, keys: list[str], how: str) -> None:
    await driver.enqueue_many([send(k) for k in keys])
    claimed = await driver.claim(ClaimOptions("w", 30_000, limit=len(keys)))
    settle = AckOptions("w") if how == "completed" else NackOptions("w", "dead")
    assert await driver.settle_many([(c.id, settle) for c in claimed]) == [True] * len(keys)


async def states(driver: JobDriver) -> dict[str, int]:
    counts: dict[str, int] = {}
    for run in await driver.introspect.list_runs(RunFilter(limit=1_000)):
        counts[run.state] = counts.get(run.state, 0) + 1
    return counts


async def test_prune_deletes_finished_runs_past_their_retention_and_keeps_the_rest(
    driver: JobDriver, clock: FrozenClock
) -> None:
    await driver.enqueue(send("stepped"))
    [stepped] = await driver.claim(ClaimOptions("w", 30_000))
    step = StepRecord("s", "run", 1, clock.now_ms(), clock.now_ms())
    assert await driver.steps.record(stepped.id, step, worker_id="w")
    assert await driver.ack(stepped.id, AckOptions("w"))
    await finish(driver, [f"old-{i}" for i in range(24)], "completed")
    await finish(driver, [f"dead-{i}" for i in range(3)], "dead")
    await driver.enqueue(send("queued"))
    cancelled = await driver.enqueue(send("cancelled"))
    await driver.introspect.cancel_run(cancelled.job_id)

    clock.advance("6d")
    await finish(driver, [f"recent-{i}" for i in range(2)], "completed")
    assert (await driver.prune(RETAIN)).completed == 0  # nothing is a week old yet
    clock.advance("1d1ms")

    report = await driver.prune(RETAIN)
    assert (report.completed, report.dead) == (26, 0)  # 25 completed + 1 cancelled
    assert await states(driver) == {"completed": 2, "dead": 3, "queued": 1}
    assert await driver.steps.load(stepped.id) == {}

    clock.advance("23d")  # dead letters are kept for their own, longer retention
    assert (await driver.prune(RETAIN)).dead == 3
    assert await states(driver) == {"queued": 1}


async def test_a_pruned_key_can_be_enqueued_again(driver: JobDriver, clock: FrozenClock) -> None:
    await finish(driver, ["once"], "completed")
    clock.advance("8d")
    assert (await driver.prune(RETAIN)).completed == 1
    again = await driver.enqueue(send("once"))
    assert again.deduplicated is False


async def test_prune_drops_expired_slots_and_published_outbox_entries(
    driver: JobDriver, clock: FrozenClock, append: Append
) -> None:
    leases = driver.slots
    assert leases is not None
    assert await leases.acquire("k", holder="gone", limit=1, ttl_ms=1_000)
    assert await leases.acquire("k2", holder="alive", limit=1, ttl_ms=60_000)
    for kind in ("published", "pending"):
        await append(kind, {})
    [entry, _] = await driver.outbox.claim(relay_id="r", lease_ms=30_000, limit=2)
    assert await driver.outbox.mark_published([entry.id], relay_id="r") == [entry.id]

    clock.advance("2s")
    report = await driver.prune(RETAIN)
    assert report.slots == 1 and await leases.holders("k2") == ["alive"]
    assert report.outbox == 0  # published, but within the day
    clock.advance("1d")
    assert (await driver.prune(RETAIN)).outbox == 1
    assert await driver.outbox.pending() == 1
