"""``ferry worker --maintenance``: a deployment without a scheduler still prunes, in one
worker process of the fleet."""

from __future__ import annotations

import asyncpg
from support.processes import Fleet
from support.waiting import eventually

from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import AckOptions, ClaimOptions

from . import app


async def test_workers_started_with_maintenance_prune_in_one_process(
    driver: PostgresJobDriver, db: asyncpg.Connection, fleet: Fleet
) -> None:
    schema = driver.schema
    await app.noop.enqueue({"n": 1})
    [run] = await driver.claim(ClaimOptions("earlier-worker", 30_000))
    assert await driver.ack(run.id, AckOptions("earlier-worker"))
    pruning = ["--maintenance", "--prune-every", "1s", "--retain-completed", "0s"]
    workers = [await fleet.worker(extra=pruning) for _ in range(2)]

    async def gone() -> bool:
        return not await db.fetchval(f'SELECT count(*) FROM "{schema}".jobs')

    await eventually(gone, within_s=30, what="the completed run to be pruned", context=fleet.logs)
    pruned = [await w.metric("job_maintenance_pruned_total", kind="completed") for w in workers]
    assert sorted(pruned) == [0, 1], "one process pruned it; the other stood by"
