"""Shared fixtures: a real PostgreSQL server and a real Redis for the whole session.

``DATABASE_URL`` points the suite at a server you run; without it the suite starts the
embedded ``pgserver`` PostgreSQL in a temporary directory. Each test that needs the
database gets a schema of its own, so tests never see each other's rows. Likewise
``REDIS_URL``, else a ``redis-server`` the session starts (``redis_server.py``); each test
that needs it gets a key prefix of its own, deleted afterwards.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterator

import asyncpg
import pytest
from redis_server import RedisServer, delete_prefix


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A DSN for a running PostgreSQL server (``DATABASE_URL`` or an embedded one)."""
    configured = os.environ.get("DATABASE_URL")
    if configured:
        yield configured
        return
    import pgserver

    data_dir = tempfile.mkdtemp(prefix="ferry-test-pg-")
    server = pgserver.get_server(data_dir, cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


@pytest.fixture
async def new_pg_schema(postgres_dsn: str) -> AsyncIterator[Callable[[], str]]:
    """Fresh, empty schema names on demand (a test with a second store needs two); every
    one handed out is dropped afterwards."""
    schemas: list[str] = []

    def new() -> str:
        schemas.append(f"ferry_t_{uuid.uuid4().hex[:12]}")
        return schemas[-1]

    yield new
    connection = await asyncpg.connect(postgres_dsn)
    try:
        for schema in schemas:
            await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await connection.close()


@pytest.fixture
def pg_schema(new_pg_schema: Callable[[], str]) -> str:
    """A fresh, empty schema name for this test; dropped afterwards."""
    return new_pg_schema()


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A URL of a running Redis (``REDIS_URL`` or one this session starts, AOF on)."""
    configured = os.environ.get("REDIS_URL")
    if configured:
        yield configured
        return
    server = RedisServer()
    server.start()
    try:
        yield server.url
    finally:
        server.remove()


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A fresh key prefix for this test; its keys are deleted afterwards."""
    prefix = f"ferry_t_{uuid.uuid4().hex[:12]}"
    yield prefix
    delete_prefix(redis_url, prefix)
