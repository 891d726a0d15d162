"""Fixtures for the worker tests: a migrated schema with effect tables, an enqueueing
driver on the real clock, a plain connection for reading rows, and a fleet of processes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from ferry._jobs.facade import set_job_driver
from ferry.drivers import PostgresJobDriver, postgres_job_driver

from .app import EFFECT_TABLES
from .processes import Fleet


async def prepare_schema(dsn: str, schema: str) -> PostgresJobDriver:
    """A migrated driver on ``schema`` with the app's effect tables, set as the job driver."""
    driver = postgres_job_driver(dsn, schema=schema, pool_max_size=4)
    await driver.open()
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(EFFECT_TABLES.format(schema=f'"{schema}"'))
    finally:
        await connection.close()
    set_job_driver(driver)
    return driver


@pytest.fixture
async def driver(postgres_dsn: str, pg_schema: str) -> AsyncIterator[PostgresJobDriver]:
    driver = await prepare_schema(postgres_dsn, pg_schema)
    yield driver
    set_job_driver(None)
    await driver.close()


@pytest.fixture
async def db(postgres_dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain connection, to read rows the way an operator would."""
    connection = await asyncpg.connect(postgres_dsn)
    yield connection
    await connection.close()


@pytest.fixture
async def fleet(postgres_dsn: str, pg_schema: str, tmp_path: Path) -> AsyncIterator[Fleet]:
    """Worker processes on this test's schema; their logs print when the test fails."""
    fleet = Fleet(postgres_dsn, pg_schema, tmp_path)
    yield fleet
    await fleet.close()
    print(fleet.logs())
