"""Fixtures: a queue driver and an outbox on one frozen clock, an app table, a relay."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from ferry.clock import FrozenClock
from ferry.drivers.postgres import PostgresJobDriver, postgres_job_driver
from ferry.outbox import PostgresOutbox, postgres_outbox
from ferry.testing.harness import Harness


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
async def driver(
    postgres_dsn: str, pg_schema: str, clock: FrozenClock
) -> AsyncIterator[PostgresJobDriver]:
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, clock=clock)
    await driver.open()
    yield driver
    await driver.close()


@pytest.fixture
def harness(driver: PostgresJobDriver, clock: FrozenClock) -> Harness:
    return Harness(driver=driver, clock=clock, tasks=[])


@pytest.fixture
async def outbox(
    postgres_dsn: str, pg_schema: str, clock: FrozenClock
) -> AsyncIterator[PostgresOutbox]:
    outbox = postgres_outbox(postgres_dsn, schema=pg_schema, clock=clock)
    await outbox.open()
    yield outbox
    await outbox.close()


@pytest.fixture
async def app_db(postgres_dsn: str, pg_schema: str) -> AsyncIterator[asyncpg.Connection]:
    """The application's connection, with its own ``orders`` table in the test schema."""
    connection = await asyncpg.connect(postgres_dsn)
    await connection.execute(f'CREATE SCHEMA IF NOT EXISTS "{pg_schema}"')
    await connection.execute(
        f'CREATE TABLE "{pg_schema}".orders (id text PRIMARY KEY, receipts integer DEFAULT 0)'
    )
    yield connection
    await connection.close()
