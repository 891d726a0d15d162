"""The chaos tests reuse the worker tests' app and processes, on every durable driver.

The queue lives on the driver under test; the effects the jobs write stay in PostgreSQL
tables (``worker.app``), read the same way whichever driver ran them.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

# The worker tests' package is named ``worker`` (pytest's rootdir-relative naming, with
# tests/integration on the path); put that folder on the path when chaos runs alone.
_INTEGRATION = str(Path(__file__).resolve().parents[1] / "integration")
if _INTEGRATION not in sys.path:
    sys.path.insert(0, _INTEGRATION)

from redis_server import delete_prefix  # noqa: E402
from worker.app import EFFECT_TABLES  # noqa: E402
from worker.conftest import db, prepare_schema  # noqa: E402
from worker.processes import Fleet  # noqa: E402

from ferry._jobs.facade import set_job_driver  # noqa: E402
from ferry.drivers.protocol import JobDriver  # noqa: E402

__all__ = ["db", "driver", "fleet"]


@pytest.fixture(params=["postgres", "redis"])
async def driver(
    request: pytest.FixtureRequest, postgres_dsn: str, pg_schema: str
) -> AsyncIterator[JobDriver]:
    """The queue's driver, set as the job driver; the effect tables in ``pg_schema``."""
    if request.param == "postgres":
        driver: JobDriver = await prepare_schema(postgres_dsn, pg_schema)
    else:
        from ferry.drivers import redis_job_driver

        connection = await asyncpg.connect(postgres_dsn)
        try:
            await connection.execute(f'CREATE SCHEMA "{pg_schema}"')
            await connection.execute(EFFECT_TABLES.format(schema=f'"{pg_schema}"'))
        finally:
            await connection.close()
        # The workers take FERRY_SCHEMA as their key prefix: the schema's name serves both.
        driver = redis_job_driver(request.getfixturevalue("redis_url"), prefix=pg_schema)
        set_job_driver(driver)
    yield driver
    set_job_driver(None)
    await driver.close()
    if request.param == "redis":
        delete_prefix(request.getfixturevalue("redis_url"), pg_schema)


@pytest.fixture
async def fleet(
    driver: JobDriver,
    request: pytest.FixtureRequest,
    postgres_dsn: str,
    pg_schema: str,
    tmp_path: Path,
) -> AsyncIterator[Fleet]:
    """Worker processes on the test's queue; their logs print when the test fails."""
    driver_url = request.getfixturevalue("redis_url") if driver.name == "redis" else None
    fleet = Fleet(postgres_dsn, pg_schema, tmp_path, driver_url=driver_url)
    yield fleet
    await fleet.close()
    print(fleet.logs())
