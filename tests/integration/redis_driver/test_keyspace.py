"""The key space: prefixes isolate deployments, every key carries the prefix's hash tag,
and nothing is left growing per run once runs are pruned."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis
from support.drivers import built
from support.runs import send

from ferry._admin.sessions import Sessions
from ferry._clock import FrozenClock
from ferry.drivers import RedisJobDriver
from ferry.drivers.protocol import (
    AckOptions,
    ClaimOptions,
    RetentionPolicy,
    RunFilter,
    StepRecord,
)


async def test_two_prefixes_on_one_server_never_see_each_others_runs(
    driver: RedisJobDriver, request: pytest.FixtureRequest, clock: FrozenClock
) -> None:
    async with built("redis", request, clock, another=True) as other:
        mine = await driver.enqueue(send("same-key"))
        theirs = await other.enqueue(send("same-key"))
        assert theirs.deduplicated is False, "an idempotency key is per prefix"
        assert [r.id for r in await other.introspect.list_runs(RunFilter())] == [theirs.job_id]
        assert await other.claim(ClaimOptions("w", 30_000, limit=10)) != []
        [claimed] = await driver.claim(ClaimOptions("w", 30_000, limit=10))
        assert claimed.id == mine.job_id


async def test_every_key_carries_the_hash_tag_and_prune_leaves_nothing_per_run(
    driver: RedisJobDriver, admin: Redis, clock: FrozenClock
) -> None:
    """What a week of production leaves behind: after 60 runs (with steps, slots, tenants,
    three queues) are done and pruned, the prefix holds a fixed handful of keys."""
    for n in range(60):
        await driver.enqueue(send(f"k{n}", queue=f"q{n % 3}", tenant="acme"))
    claimed = await driver.claim(ClaimOptions("w", 30_000, limit=60))
    assert driver.slots is not None
    for run in claimed:
        await driver.slots.acquire(f"cap:{run.id}", holder=run.id, limit=1, ttl_ms=30_000)
        step = StepRecord("s", "run", 1, clock.now_ms(), clock.now_ms())
        assert await driver.steps.record(run.id, step, worker_id="w")
    landed = await driver.settle_many([(run.id, AckOptions("w")) for run in claimed])
    assert landed == [True] * 60
    await Sessions(driver).revoke("s", until_ms=clock.now_ms() + 1)
    clock.advance("1d")
    report = await driver.prune(
        RetentionPolicy(completed_ms=0, dead_ms=0, published_outbox_ms=0, batch=7)
    )
    assert report.completed == 60
    tag = "{" + driver.prefix + "}:"
    keys = sorted([key async for key in admin.scan_iter(match="*" + driver.prefix + "*")])
    assert all(key.startswith(tag) for key in keys), keys
    assert len(keys) <= 8, keys  # counters and registries, none per run
    assert await driver.stats() == []
