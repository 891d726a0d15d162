"""Moving a queue between a PostgreSQL store and a Redis one, both ways (``ferry jobs
drain``'s move): every queued and dead run arrives with its attempts, error and steps,
and leaves the source."""

from __future__ import annotations

import pytest

from ferry._clock import FrozenClock
from ferry._move import move_runs
from ferry.drivers import postgres_job_driver, redis_job_driver
from ferry.drivers.protocol import (
    ClaimOptions,
    EnqueueRequest,
    JobDriver,
    JobError,
    NackOptions,
    RunFilter,
    StepRecord,
)


def send(key: str) -> EnqueueRequest:
    return EnqueueRequest("send", "default", {"key": key, "n": [1, 2.5]}, key, 3, tenant="t")


async def seed(driver: JobDriver, clock: FrozenClock) -> None:
    """Three queued runs, one of them retried once with a recorded step; one dead run."""
    await driver.enqueue_many([send(f"q{n}") for n in range(3)] + [send("dead")])
    [first] = await driver.claim(ClaimOptions("w", 60_000))
    step = StepRecord("fetch", "run", {"rows": 3}, clock.now_ms(), clock.now_ms())
    assert await driver.steps.record(first.id, step, worker_id="w")
    error = JobError("X_JOB_FAILED", "boom")
    assert await driver.nack(first.id, NackOptions("w", "retry", error=error))
    [dying] = [r for r in await driver.claim(ClaimOptions("w", 60_000, limit=4))
               if r.idempotency_key == "dead"]  # fmt: skip
    assert await driver.nack(dying.id, NackOptions("w", "dead", error=error))


@pytest.mark.parametrize("direction", ["postgres-to-redis", "redis-to-postgres"])
async def test_a_queue_moves_between_postgres_and_redis_with_everything_it_carries(
    direction: str,
    postgres_dsn: str,
    pg_schema: str,
    redis_url: str,
    redis_prefix: str,
    clock: FrozenClock,
) -> None:
    postgres = postgres_job_driver(postgres_dsn, schema=pg_schema, clock=clock)
    redis = redis_job_driver(redis_url, prefix=redis_prefix, clock=clock)
    source, target = (postgres, redis) if direction == "postgres-to-redis" else (redis, postgres)
    try:
        await seed(source, clock)
        for run in await source.introspect.list_runs(RunFilter(state="running")):
            await source.nack(run.id, NackOptions("w", "interrupted"))
        report = await move_runs(source, target, drain_id="d", batch=2, include_dead=True)
        assert (report.total().imported, report.total().removed) == (4, 4), report
        assert await source.introspect.list_runs(RunFilter()) == []
        moved = {r.idempotency_key: r for r in [
            await target.introspect.get_run(s.id)
            for s in await target.introspect.list_runs(RunFilter())
        ] if r is not None}  # fmt: skip
        assert sorted(moved) == ["dead", "q0", "q1", "q2"]
        assert moved["dead"].summary.state == "dead"
        retried = moved["q0"]
        assert (retried.summary.state, retried.summary.attempts) == ("queued", 1)
        assert retried.summary.last_error == JobError("X_JOB_FAILED", "boom")
        assert [s.name for s in retried.steps] == ["fetch"]
        assert retried.payload == {"key": "q0", "n": [1, 2.5]}
    finally:
        await postgres.close()
        await redis.close()
