"""``Concurrency`` holds across the fleet, and is refused where it cannot be held."""

from __future__ import annotations

import itertools

import asyncpg
import pytest
from support.core_only import CoreOnlyDriver
from support.processes import Fleet
from support.waiting import eventually

from ferry._clock import SystemClock
from ferry._jobs.facade import enqueue_many
from ferry._worker import job_worker
from ferry.drivers import PostgresJobDriver
from ferry.errors import FerryError

from . import app


async def test_two_workers_never_overlap_runs_of_a_limit_1_key(
    driver: PostgresJobDriver, db: asyncpg.Connection, fleet: Fleet
) -> None:
    schema = driver.schema
    inputs = [{"group": g, "idx": i, "hold_ms": 20} for g in ("a", "b") for i in range(30)]
    await enqueue_many(app.keyed.definition, inputs)
    for _ in range(2):
        await fleet.worker(concurrency=8)

    async def all_completed() -> bool:
        return await db.fetchval(
            f"SELECT count(*) FROM \"{schema}\".jobs WHERE state = 'completed'"
        ) == len(inputs)

    await eventually(all_completed, within_s=60, what="every keyed run to complete")
    for group in ("a", "b"):
        intervals = await db.fetch(
            f'SELECT started, ended FROM "{schema}".intervals WHERE grp = $1 ORDER BY started',
            group,
        )
        assert len(intervals) == 30
        for earlier, later in itertools.pairwise(intervals):
            assert earlier["ended"] is not None
            assert later["started"] >= earlier["ended"], f"two runs of key {group} overlapped"


async def test_a_job_wide_limit_of_3_never_runs_more_than_3_at_once_across_workers(
    driver: PostgresJobDriver, db: asyncpg.Connection, fleet: Fleet
) -> None:
    schema = driver.schema
    await enqueue_many(app.capped.definition, [{"n": n} for n in range(40)])
    for _ in range(2):
        await fleet.worker(concurrency=8)

    async def all_recorded() -> bool:
        return (
            await db.fetchval(f'SELECT count(*) FROM "{schema}".intervals WHERE ended IS NOT NULL')
            == 40
        )

    await eventually(all_recorded, within_s=60, what="every capped run to finish")
    edges = await db.fetch(
        f"""SELECT at, delta FROM (
                SELECT started AS at, 1 AS delta FROM "{schema}".intervals
                UNION ALL SELECT ended, -1 FROM "{schema}".intervals) AS e
            ORDER BY at, delta"""
    )
    running = peak = 0
    for edge in edges:
        running += edge["delta"]
        peak = max(peak, running)
    assert 1 <= peak <= 3


async def test_when_busy_fail_fails_fast_with_x_concurrency_busy_instead_of_waiting(
    driver: PostgresJobDriver, db: asyncpg.Connection, fleet: Fleet
) -> None:
    schema = driver.schema
    await app.exclusive.enqueue({"group": "g", "idx": 0, "hold_ms": 3_000})
    await fleet.worker(concurrency=8)

    async def holding() -> bool:
        return bool(await db.fetchval(f'SELECT count(*) FROM "{schema}".intervals'))

    await eventually(holding, within_s=20, what="the first run to hold the key")
    await app.exclusive.enqueue({"group": "g", "idx": 1})

    async def failed() -> asyncpg.Record | None:
        return await db.fetchrow(
            f"""SELECT last_error_code FROM "{schema}".jobs
                WHERE idempotency_key = 'exclusive:g:1' AND state = 'dead'"""
        )

    row = await eventually(failed, within_s=20, what="the busy run to fail")
    assert row["last_error_code"] == "X_CONCURRENCY_BUSY"


async def test_a_driver_without_slots_refuses_to_start_naming_every_job_with_concurrency() -> None:
    """The spec's refusal, kept: a driver with no fleet slots (its ``LeaseStore``) can
    only hold a cap per process, so it refuses every job that declared one."""
    driver = CoreOnlyDriver(SystemClock())
    with pytest.raises(FerryError) as refused:
        await job_worker(driver=driver, jobs=[app.keyed, app.noop, app.capped]).start()
    assert refused.value.code == "X_JOB_CONCURRENCY_UNENFORCEABLE"
    assert '"capped", "keyed"' in refused.value.message
    assert "noop" not in refused.value.message
