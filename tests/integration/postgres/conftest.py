"""Fixtures for the Postgres driver's own tests: a driver on a fresh schema, a frozen
clock, and a plain connection to look at rows the way an operator would."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from ferry._clock import FrozenClock
from ferry.drivers import PostgresJobDriver, postgres_job_driver


@pytest.fixture
async def driver(
    postgres_dsn: str, pg_schema: str, clock: FrozenClock
) -> AsyncIterator[PostgresJobDriver]:
    """An opened driver on this test's schema and frozen clock."""
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, clock=clock, pool_max_size=40)
    await driver.open()
    yield driver
    await driver.close()


@pytest.fixture
async def admin(postgres_dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain connection for reading rows and poking the server from outside the driver."""
    connection = await asyncpg.connect(postgres_dsn)
    yield connection
    await connection.close()
