"""A backfill killed with SIGKILL resumes from its last checkpoint in another worker."""

from __future__ import annotations

import asyncpg
import pytest
from support.processes import FerryProcess, Fleet
from support.waiting import eventually

from ferry._clock import Clock, SystemClock
from ferry._jobs.facade import set_job_driver
from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import Progress

from .app import TABLES, copy_rows

ROWS = 200


@pytest.fixture
def clock() -> Clock:
    return SystemClock()


@pytest.fixture
async def admin(
    db: asyncpg.Connection, pg_schema: str, driver: PostgresJobDriver
) -> asyncpg.Connection:
    """The plain connection, once the app's tables are in the migrated schema, seeded."""
    await db.execute(TABLES.format(schema=f'"{pg_schema}"'))
    await db.execute(f'INSERT INTO "{pg_schema}".source SELECT generate_series(1, $1)', ROWS)
    return db


async def spawn_worker(fleet: Fleet) -> FerryProcess:
    """A worker of the backfill app whose pages pause, so a kill lands mid-pass."""
    return await fleet.start(
        "worker", "--app", "backfill.app", "--lease-seconds", "2",
        name="worker", env=fleet.env(BACKFILL_PAGE_PAUSE="0.05"),
    )  # fmt: skip


async def test_a_backfill_killed_mid_pass_resumes_from_its_last_checkpoint(
    driver: PostgresJobDriver, admin: asyncpg.Connection, pg_schema: str, fleet: Fleet
) -> None:
    """Budget: one SIGKILL mid-pass. Invariant: the second worker starts at the checkpoint
    the first one left (never at the start), every row is copied, the run completes."""
    previous = set_job_driver(driver)
    try:
        enqueued = await copy_rows.enqueue({"page_size": 10})
    finally:
        set_job_driver(previous)
    schema = f'"{pg_schema}"'

    async def fifty_rows_in() -> bool:
        value = await admin.fetchval(
            f"SELECT (value->>'processed')::bigint FROM {schema}.records WHERE space = 'backfills'"
        )
        return int(value or 0) >= 50

    first = await spawn_worker(fleet)
    await eventually(fifty_rows_in, within_s=60, what="50 rows copied", context=fleet.logs)
    await first.stop()  # SIGKILL: no drain, no settle, the lease just lapses
    killed_at = await admin.fetchrow(
        f"SELECT (value->'cursor')::text AS cursor, (value->>'processed')::bigint AS processed "
        f"FROM {schema}.records WHERE space = 'backfills'"
    )
    assert killed_at["processed"] < ROWS

    second = await spawn_worker(fleet)

    async def completed() -> bool:
        run = await driver.introspect.get_run(enqueued.job_id)
        return run is not None and run.summary.state == "completed"

    await eventually(completed, within_s=60, what="the run to complete", context=fleet.logs)
    await second.stop()

    fetches = await admin.fetch(f"SELECT cursor, pid FROM {schema}.page_fetches ORDER BY seq")
    by_second = [f["cursor"] for f in fetches if f["pid"] == second.pid]
    assert by_second[0] == int(killed_at["cursor"])
    assert [f["cursor"] for f in fetches].count(None) == 1  # never restarted from the top
    assert await admin.fetchval(f"SELECT count(*) FROM {schema}.target") == ROWS
    run = await driver.introspect.get_run(enqueued.job_id)
    assert run is not None
    assert run.summary.attempts == 2
    assert run.progress == Progress(ROWS, ROWS)
    assert run.result["resumedFrom"] == int(killed_at["cursor"])
