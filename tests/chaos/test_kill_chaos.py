"""Repeated ``kill -9`` of worker processes under load: nothing lost, nothing run too often."""

from __future__ import annotations

import asyncio
import random
import time

import asyncpg
from support.processes import FerryProcess, Fleet
from support.waiting import eventually
from worker import app

from ferry._jobs.facade import enqueue_many
from ferry.drivers import PostgresJobDriver

JOBS = 1_000
WORKERS = 3
MAX_KILLS = 10
STEPS = 3


async def test_random_kills_of_three_workers_lose_no_job_and_rerun_steps_only_on_redelivery(
    driver: PostgresJobDriver, db: asyncpg.Connection, fleet: Fleet
) -> None:
    """Budget: 1,000 runs of a 3-step job (80 ms per step), 3 worker processes (concurrency
    16, lease 2 s); while runs remain, one random worker is SIGKILLed every 0.3–1.0 s, at
    most 10 kills, each replaced at once; the whole run is guarded at 150 s.

    Invariants (at-least-once, asserted on the effect rows each step writes):
    every run is one row and completed (none lost, none dead); every step's effect ran at
    least once; within one delivery a step ran at most once (effects of a step carry
    distinct attempt numbers — only kills, never drains, so every delivery counts one);
    a step ran more than once only in a run that was redelivered (attempts > 1), and never
    more often than the run was delivered.
    """
    schema = driver.schema
    rng = random.Random(20261130)
    await enqueue_many(
        app.chain.definition,
        [{"key": f"c{n}", "step_ms": [80] * STEPS} for n in range(JOBS)],
    )
    alive: list[FerryProcess] = [
        await fleet.worker(lease_seconds=2, concurrency=16) for _ in range(WORKERS)
    ]
    started = time.monotonic()

    async def remaining() -> int:
        return int(
            await db.fetchval(f"SELECT count(*) FROM \"{schema}\".jobs WHERE state <> 'completed'")
        )

    kills = 0
    while kills < MAX_KILLS and await remaining() > 0:
        await asyncio.sleep(rng.uniform(0.3, 1.0))
        victim = alive.pop(rng.randrange(len(alive)))
        victim.process.kill()
        await victim.wait()
        kills += 1
        alive.append(await fleet.worker(lease_seconds=2, concurrency=16, ready=False))

    async def all_completed() -> bool:
        return await remaining() == 0

    await eventually(all_completed, within_s=150, what=f"all {JOBS} runs completed")
    print(f"{JOBS} runs, {kills} kills: done in {time.monotonic() - started:.1f} s")
    assert kills >= 3, "the chaos actually happened"

    runs = await db.fetch(f'SELECT idempotency_key, state, attempts FROM "{schema}".jobs')
    assert len(runs) == JOBS and {r["state"] for r in runs} == {"completed"}
    attempts = {r["idempotency_key"].removeprefix("chain:"): r["attempts"] for r in runs}
    effects = await db.fetch(
        f"""SELECT job_key, step, count(*) AS ran, count(DISTINCT attempt) AS deliveries
            FROM "{schema}".effects GROUP BY job_key, step"""
    )
    assert len(effects) == JOBS * STEPS, "every step of every run ran"
    redelivered = {key for key, n in attempts.items() if n > 1}
    for effect in effects:
        key, ran = effect["job_key"], effect["ran"]
        assert ran == effect["deliveries"], f"{key}/{effect['step']} ran twice in one delivery"
        assert ran <= attempts[key], f"{key}/{effect['step']} ran more often than delivered"
        assert ran == 1 or key in redelivered, f"{key} re-ran a step without a redelivery"
    print(
        f"{len(redelivered)} runs redelivered; "
        f"{sum(e['ran'] - 1 for e in effects)} step re-executions in all"
    )
