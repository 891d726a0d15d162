"""SIGTERM drains a worker exactly as the spec says (real processes, real Postgres)."""

from __future__ import annotations

import signal

import asyncpg
from support.processes import Fleet
from support.waiting import eventually

from ferry.drivers import PostgresJobDriver

from . import app


async def _effects(db: asyncpg.Connection, schema: str) -> list[asyncpg.Record]:
    return await db.fetch(f'SELECT step, attempt, worker FROM "{schema}".effects ORDER BY id')


async def test_sigterm_mid_step_resumes_on_another_worker_from_the_last_completed_step_uncounted(
    driver: PostgresJobDriver, db: asyncpg.Connection, fleet: Fleet
) -> None:
    schema = driver.schema
    first = await fleet.worker(drain_seconds=30)
    run = await app.chain.enqueue({"key": "k", "step_ms": [0, 60_000, 0]})

    async def in_second_step() -> bool:
        return any(e["step"] == "s1" for e in await _effects(db, schema))

    await eventually(in_second_step, within_s=20, what="step s1 running")
    first.send(signal.SIGTERM)
    assert await first.wait() == 0, "a drain whose bodies stop exits cleanly"
    assert "jobs.worker.draining" in first.log()
    row = await db.fetchrow(
        f'SELECT state, attempts, last_error_code FROM "{schema}".jobs WHERE id = $1',
        int(run.job_id),
    )
    assert (row["state"], row["attempts"], row["last_error_code"]) == ("queued", 0, "X_DRAINING")

    # The step cut short runs again from its start on the next worker; make it quick.
    await db.execute(
        f"UPDATE \"{schema}\".jobs SET payload = jsonb_set(payload, '{{step_ms}}', '[0, 0, 0]')"
    )
    await fleet.worker()

    async def completed() -> asyncpg.Record | None:
        return await db.fetchrow(
            f"SELECT attempts FROM \"{schema}\".jobs WHERE id = $1 AND state = 'completed'",
            int(run.job_id),
        )

    done = await eventually(completed, within_s=20, what="the run to complete")
    assert done["attempts"] == 1, "the interrupted attempt was not counted"
    effects = await _effects(db, schema)
    assert [e["step"] for e in effects] == ["s0", "s1", "s1", "s2"], "resumed from s1"
    assert effects[1]["worker"] != effects[2]["worker"], "resumed on another worker"
    assert {e["attempt"] for e in effects} == {1}, "both deliveries were attempt 1"


async def test_a_body_ignoring_the_drain_is_abandoned_at_the_deadline_and_counted(
    driver: PostgresJobDriver, db: asyncpg.Connection, fleet: Fleet
) -> None:
    schema = driver.schema
    stubborn_worker = await fleet.worker(drain_seconds=1, lease_seconds=2)
    run = await app.stubborn.enqueue({"key": "k"})

    async def started() -> bool:
        return bool(await _effects(db, schema))

    await eventually(started, within_s=20, what="the stubborn body to start")
    stubborn_worker.send(signal.SIGTERM)
    await stubborn_worker.wait(within_s=20)
    assert "jobs.attempt.abandoned" in stubborn_worker.log()
    row = await db.fetchrow(
        f'SELECT state, attempts FROM "{schema}".jobs WHERE id = $1', int(run.job_id)
    )
    assert (row["state"], row["attempts"]) == ("running", 1), "abandoned unsettled, counted"

    await fleet.worker(lease_seconds=2)

    async def completed() -> asyncpg.Record | None:
        return await db.fetchrow(
            f"SELECT attempts FROM \"{schema}\".jobs WHERE id = $1 AND state = 'completed'",
            int(run.job_id),
        )

    done = await eventually(completed, within_s=20, what="redelivery once the lease lapsed")
    assert done["attempts"] == 2, "the abandoned attempt counted"


async def test_a_second_signal_during_the_drain_exits_at_once(
    driver: PostgresJobDriver, db: asyncpg.Connection, fleet: Fleet
) -> None:
    schema = driver.schema
    worker = await fleet.worker(drain_seconds=60)
    await app.stubborn.enqueue({"key": "k"})

    async def started() -> bool:
        return bool(await _effects(db, schema))

    await eventually(started, within_s=20, what="the stubborn body to start")
    worker.send(signal.SIGTERM)

    async def draining() -> bool:
        return "jobs.worker.draining" in worker.log()

    await eventually(draining, within_s=10, what="the drain to begin")
    worker.send(signal.SIGINT)
    assert await worker.wait(within_s=10) == 1
    assert "jobs.process.forced-exit" in worker.log()
