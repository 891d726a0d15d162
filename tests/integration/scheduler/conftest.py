"""Fixtures for the scheduler tests: a migrated schema, a plain connection for reading
rows, and scheduler processes whose logs print when a test fails."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from ferry.drivers import PostgresJobDriver, postgres_job_driver

from .processes import Schedulers


@pytest.fixture
async def migrated(postgres_dsn: str, pg_schema: str) -> AsyncIterator[PostgresJobDriver]:
    """A driver on the test's schema, migrated (scheduler tables included) on the real clock."""
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, pool_max_size=2)
    await driver.open()
    yield driver
    await driver.close()


@pytest.fixture
async def db(postgres_dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain connection, to read rows the way an operator would."""
    connection = await asyncpg.connect(postgres_dsn)
    yield connection
    await connection.close()


@pytest.fixture
async def schedulers(
    postgres_dsn: str, pg_schema: str, tmp_path: Path
) -> AsyncIterator[Schedulers]:
    fleet = Schedulers(postgres_dsn, pg_schema, tmp_path)
    yield fleet
    await fleet.close()
    print(fleet.logs())
