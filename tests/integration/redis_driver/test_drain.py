"""Moving a queue between a PostgreSQL store and a Redis one, both ways (``ferry jobs
drain``'s move): every queued and dead run arrives with its attempts, error and steps,
and leaves the source."""

from __future__ import annotations

import pytest
from support.drivers import built
from support.runs import send

from ferry._clock import FrozenClock
from ferry._move import move_runs
from ferry.drivers.protocol import (
    ClaimOptions,
    EnqueueRequest,
    JobDriver,
    JobError,
    NackOptions,
    RunFilter,
    StepRecord,
)


def carried(key: str) -> EnqueueRequest:
    """A run with a nested list and a float in its payload, and a tenant: what must arrive
    as it left."""
    return send(key, payload={"key": key, "n": [1, 2.5]}, tenant="t")


async def seed(driver: JobDriver, clock: FrozenClock) -> None:
    """Three queued runs, one of them retried once with a recorded step; one dead run."""
    await driver.enqueue_many([carried(f"q{n}") for n in range(3)] + [carried("dead")])
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
    direction: str, request: pytest.FixtureRequest, clock: FrozenClock
) -> None:
    source_kind, target_kind = direction.split("-to-")
    async with (
        built(source_kind, request, clock) as source,
        built(target_kind, request, clock) as target,
    ):
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
