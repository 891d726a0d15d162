"""Housekeeping: finished history is pruned in bounded batches; dead letters stay."""

from __future__ import annotations

import asyncpg

from ferry._clock import FrozenClock
from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import AckOptions, ClaimOptions, NackOptions, StepRecord

from .helpers import send


async def _finish(driver: PostgresJobDriver, keys: list[str], how: str) -> None:
    await driver.enqueue_many([send(k) for k in keys])
    claimed = await driver.claim(ClaimOptions("w", 30_000, limit=len(keys)))
    settle = AckOptions("w") if how == "completed" else NackOptions("w", "dead")
    assert await driver.settle_many([(c.id, settle) for c in claimed]) == [True] * len(keys)


async def test_prune_deletes_old_finished_runs_in_batches_and_keeps_dead_ones(
    driver: PostgresJobDriver, clock: FrozenClock, admin: asyncpg.Connection, pg_schema: str
) -> None:
    await driver.enqueue(send("stepped"))
    [stepped] = await driver.claim(ClaimOptions("w", 30_000))
    step = StepRecord("s", "run", 1, clock.now_ms(), clock.now_ms())
    assert await driver.steps.record(stepped.id, step, worker_id="w")
    assert await driver.ack(stepped.id, AckOptions("w"))
    await _finish(driver, [f"old-{i}" for i in range(24)], "completed")
    await _finish(driver, [f"dead-{i}" for i in range(3)], "dead")
    await driver.enqueue(send("queued"))
    cancelled = await driver.enqueue(send("cancelled"))
    await driver.introspect.cancel_run(cancelled.job_id)

    clock.advance("6d")
    await _finish(driver, [f"recent-{i}" for i in range(2)], "completed")
    assert await driver.prune(batch=10) == 0  # nothing is a week old yet
    clock.advance("1d1ms")

    assert await driver.prune(batch=10) == 26  # 10 + 10 + 6: the short batch ends it
    remaining = await admin.fetch(
        f'SELECT state, count(*) FROM "{pg_schema}".jobs GROUP BY state ORDER BY state'
    )
    assert [(s, n) for s, n in remaining] == [("completed", 2), ("dead", 3), ("queued", 1)]
    steps = await admin.fetchval(f'SELECT count(*) FROM "{pg_schema}".steps')
    assert steps == 0


async def test_a_pruned_key_can_be_enqueued_again(
    driver: PostgresJobDriver, clock: FrozenClock
) -> None:
    await _finish(driver, ["once"], "completed")
    clock.advance("8d")
    assert await driver.prune() == 1
    again = await driver.enqueue(send("once"))
    assert again.deduplicated is False
