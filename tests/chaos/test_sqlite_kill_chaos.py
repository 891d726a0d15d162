"""Repeated ``kill -9`` of worker processes sharing one SQLite file: nothing lost, nothing
run too often — the same budget and invariants as the Postgres chaos test."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable

import pytest
from sqlite_driver import app
from sqlite_driver.conftest import db_path, db_url, read, roles
from sqlite_driver.processes import Roles
from support.processes import FerryProcess
from support.waiting import eventually

from ferry._jobs.facade import enqueue_many, set_job_driver
from ferry.drivers import sqlite_job_driver

__all__ = ["db_path", "db_url", "read", "roles"]

JOBS = 1_000
WORKERS = 3
MAX_KILLS = 10
STEPS = 3

Read = Callable[[str], list[tuple[object, ...]]]


@pytest.fixture
async def enqueued(roles: Roles) -> AsyncIterator[None]:
    """The runs, enqueued through a driver of this process on the file."""
    driver = sqlite_job_driver(roles.url)
    set_job_driver(driver)
    try:
        await enqueue_many(
            app.chain.definition,
            [{"key": f"c{n}", "step_ms": [80] * STEPS} for n in range(JOBS)],
        )
        yield
    finally:
        set_job_driver(None)
        await driver.close()


async def test_random_kills_of_three_sqlite_workers_lose_no_job_and_rerun_steps_only_on_redelivery(
    roles: Roles, enqueued: None, read: Read
) -> None:
    """Budget: 1,000 runs of a 3-step job (80 ms per step), 3 ``ferry worker`` processes on
    one SQLite file (concurrency 16, lease 2 s); while runs remain, one random worker is
    SIGKILLed every 0.3–1.0 s, at most 10 kills, each replaced at once; the whole run is
    guarded at 150 s.

    Invariants (at-least-once, asserted on the effect rows each step writes to the file):
    every run is one row and completed (none lost, none dead); every step's effect ran at
    least once; within one delivery a step ran at most once; a step ran more than once only
    in a run that was redelivered, and never more often than the run was delivered.
    """
    rng = random.Random(20261201)
    options = ("--concurrency", "16")
    alive: list[FerryProcess] = [await roles.worker(*options) for _ in range(WORKERS)]
    started = time.monotonic()

    def remaining() -> int:
        [[count]] = read("SELECT count(*) FROM ferry_jobs WHERE state <> 'completed'")
        return int(count)  # type: ignore[call-overload]

    kills = 0
    while kills < MAX_KILLS and remaining() > 0:
        await asyncio.sleep(rng.uniform(0.3, 1.0))
        victim = alive.pop(rng.randrange(len(alive)))
        victim.process.kill()
        await victim.wait()
        kills += 1
        alive.append(await roles.worker(*options))

    async def all_completed() -> bool:
        return remaining() == 0

    await eventually(all_completed, within_s=150, what=f"all {JOBS} runs completed")
    print(f"sqlite: {JOBS} runs, {kills} kills: done in {time.monotonic() - started:.1f} s")
    assert kills >= 3, "the chaos actually happened"

    runs = read("SELECT idempotency_key, state, attempts FROM ferry_jobs")
    assert len(runs) == JOBS and {state for _, state, _ in runs} == {"completed"}
    attempts = {str(key).removeprefix("chain:"): int(n) for key, _, n in runs}  # type: ignore[call-overload]
    effects = read(
        "SELECT job_key, step, count(*), count(DISTINCT attempt) FROM effects GROUP BY 1, 2"
    )
    assert len(effects) == JOBS * STEPS, "every step of every run ran"
    redelivered = {key for key, n in attempts.items() if n > 1}
    for key, step, ran, deliveries in effects:
        assert ran == deliveries, f"{key}/{step} ran twice in one delivery"
        assert ran <= attempts[str(key)], f"{key}/{step} ran more often than delivered"  # type: ignore[operator]
        assert ran == 1 or key in redelivered, f"{key} re-ran a step without a redelivery"
    print(
        f"sqlite: {len(redelivered)} runs redelivered; "
        f"{sum(int(e[2]) - 1 for e in effects)} step re-executions in all"  # type: ignore[call-overload]
    )
