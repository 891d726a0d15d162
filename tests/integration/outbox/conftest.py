"""Fixtures: the driver's outbox on the frozen clock, and an app table."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import OutboxStore


@pytest.fixture
def outbox(driver: PostgresJobDriver) -> OutboxStore:
    """The outbox of the test's driver (same schema, same pool, same frozen clock)."""
    return driver.outbox


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
