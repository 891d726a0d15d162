"""A worker killed with SIGKILL loses nothing: its runs are redelivered once the lease lapses."""

from __future__ import annotations

import time

import asyncpg
from support.processes import Fleet
from support.waiting import eventually

from ferry.drivers import PostgresJobDriver

from . import app


async def test_a_killed_workers_job_is_redelivered_after_the_lease_window_and_completes(
    driver: PostgresJobDriver, db: asyncpg.Connection, fleet: Fleet
) -> None:
    schema = driver.schema
    doomed = await fleet.worker(lease_seconds=2)
    run = await app.chain.enqueue({"key": "k1", "step_ms": [0, 60_000, 0]})

    async def second_step_started() -> bool:
        return bool(
            await db.fetchval(f'SELECT count(*) FROM "{schema}".effects WHERE step = $1', "s1")
        )

    await eventually(second_step_started, within_s=20, what="step s1 running")
    doomed.process.kill()
    await doomed.wait()
    killed_at = time.monotonic()
    # The step that was running when the worker died must run again with a short body.
    await db.execute(
        f"UPDATE \"{schema}\".jobs SET payload = jsonb_set(payload, '{{step_ms}}', '[0, 0, 0]')"
    )
    await fleet.worker(lease_seconds=2)

    async def completed() -> asyncpg.Record | None:
        return await db.fetchrow(
            f"SELECT state, attempts FROM \"{schema}\".jobs WHERE id = $1 AND state = 'completed'",
            int(run.job_id),
        )

    row = await eventually(completed, within_s=30, what="the run to complete elsewhere")
    print(f"redelivered and completed {time.monotonic() - killed_at:.2f} s after the kill")
    assert row["attempts"] == 2, "a crash counts the attempt"
    counts = dict(
        await db.fetch(f'SELECT step, count(*) FROM "{schema}".effects GROUP BY step ORDER BY step')
    )
    assert counts == {"s0": 1, "s1": 2, "s2": 1}, "only the step cut short ran again"
