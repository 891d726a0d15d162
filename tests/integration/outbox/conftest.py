"""Fixtures: an outbox on the frozen clock, an app table, a relay."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from ferry._clock import FrozenClock
from ferry._outbox import PostgresOutbox, postgres_outbox


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
