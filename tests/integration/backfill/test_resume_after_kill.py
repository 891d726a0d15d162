"""A backfill killed with SIGKILL resumes from its last checkpoint in another worker."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import asyncpg
import pytest
from role_process import free_port

from ferry._jobs.facade import set_job_driver
from ferry.drivers import PostgresJobDriver, postgres_job_driver
from ferry.drivers.protocol import Progress

from .app import TABLES, copy_rows

INTEGRATION_DIR = Path(__file__).resolve().parents[1]
REPO = Path(__file__).resolve().parents[3]
CLI = "import sys; from ferry._cli import main; sys.exit(main())"
ROWS = 200


@pytest.fixture
async def driver(postgres_dsn: str, pg_schema: str) -> AsyncIterator[PostgresJobDriver]:
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema)
    await driver.open()
    yield driver
    await driver.close()


@pytest.fixture
async def admin(
    postgres_dsn: str, pg_schema: str, driver: PostgresJobDriver
) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(postgres_dsn)
    await connection.execute(TABLES.format(schema=f'"{pg_schema}"'))
    await connection.execute(
        f'INSERT INTO "{pg_schema}".source SELECT generate_series(1, $1)', ROWS
    )
    yield connection
    await connection.close()


async def spawn_worker(dsn: str, schema: str, log: Path) -> asyncio.subprocess.Process:
    env = {
        **os.environ,
        "DATABASE_URL": dsn,
        "FERRY_SCHEMA": schema,
        "PYTHONPATH": os.pathsep.join([str(INTEGRATION_DIR), str(REPO / "runtime")]),
        "METRICS_PORT": str(free_port()),
        "BACKFILL_PAGE_PAUSE": "0.05",
    }
    with log.open("ab") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-c", CLI, "worker", "--app", "backfill.app", "--lease-seconds", "2",
            env=env, cwd=REPO, stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out,
        )  # fmt: skip


async def until(
    check: Callable[[], Awaitable[bool]], *, within_s: float, what: str, log: Path
) -> None:
    """Poll ``check`` until it holds; the bound is a guard, not a timing."""
    try:
        async with asyncio.timeout(within_s):
            while True:
                if await check():
                    return
                await asyncio.sleep(0.05)
    except TimeoutError:
        raise AssertionError(f"gave up waiting for {what}:\n{tail(log)}") from None


def tail(log: Path) -> str:
    """The end of the workers' log, for a failure message."""
    return log.read_text(errors="replace")[-3000:]


async def test_a_backfill_killed_mid_pass_resumes_from_its_last_checkpoint(
    driver: PostgresJobDriver, admin: asyncpg.Connection, postgres_dsn: str, pg_schema: str,
    tmp_path: Path,
) -> None:  # fmt: skip
    """Budget: one SIGKILL mid-pass. Invariant: the second worker starts at the checkpoint
    the first one left (never at the start), every row is copied, the run completes."""
    log = tmp_path / "workers.log"
    previous = set_job_driver(driver)
    try:
        enqueued = await copy_rows.enqueue({"page_size": 10})
    finally:
        set_job_driver(previous)
    schema = f'"{pg_schema}"'

    async def fifty_rows_in() -> bool:
        value = await admin.fetchval(f"SELECT processed FROM {schema}.backfills")
        return int(value or 0) >= 50

    first = await spawn_worker(postgres_dsn, pg_schema, log)
    try:
        await until(fifty_rows_in, within_s=60, what="50 rows copied", log=log)
        first.kill()  # SIGKILL: no drain, no settle, the lease just lapses
        await first.wait()
        killed_at = await admin.fetchrow(f"SELECT cursor::text, processed FROM {schema}.backfills")
        assert killed_at["processed"] < ROWS

        second = await spawn_worker(postgres_dsn, pg_schema, log)
        try:

            async def completed() -> bool:
                run = await driver.introspect.get_run(enqueued.job_id)
                return run is not None and run.summary.state == "completed"

            await until(completed, within_s=60, what="the run to complete", log=log)
        finally:
            second.kill()
            await second.wait()
    finally:
        if first.returncode is None:
            first.kill()
            await first.wait()

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
