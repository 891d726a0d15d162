"""The conformance suite runs every test against every shipped driver.

A driver is a product feature only if it passes the same behaviour tests as the others:
these fixtures hand each test a fresh driver of each kind on one frozen clock.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import aiosqlite
import asyncpg
import pytest

from ferry._clock import FrozenClock
from ferry.drivers.protocol import JobDriver, JsonValue
from ferry.testing import Harness


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture(params=["memory", "postgres", "sqlite"])
async def driver(
    request: pytest.FixtureRequest,
    clock: FrozenClock,
    postgres_dsn: str,
    pg_schema: str,
    tmp_path: Path,
) -> AsyncIterator[JobDriver]:
    """A fresh, empty driver of each kind, on the test's frozen clock (SQLite: a new file)."""
    if request.param == "memory":
        from ferry.drivers import memory_job_driver

        memory = memory_job_driver(clock=clock)
        yield memory
        await memory.close()
        return
    if request.param == "sqlite":
        from ferry.drivers import sqlite_job_driver

        sqlite = sqlite_job_driver(tmp_path / "ferry.db", clock=clock)
        yield sqlite
        await sqlite.close()
        return
    from ferry.drivers import postgres_job_driver

    postgres = postgres_job_driver(postgres_dsn, schema=pg_schema, clock=clock)
    yield postgres
    await postgres.close()


@pytest.fixture
async def other_driver(
    driver: JobDriver,
    clock: FrozenClock,
    postgres_dsn: str,
    new_pg_schema: Callable[[], str],
    tmp_path: Path,
) -> AsyncIterator[JobDriver]:
    """A second, empty store of the test driver's kind on the same clock (Postgres: another
    schema; SQLite: another file): where a drain moves the test driver's runs to."""
    if driver.name == "memory":
        from ferry.drivers import memory_job_driver

        memory = memory_job_driver(clock=clock)
        yield memory
        await memory.close()
        return
    if driver.name == "sqlite":
        from ferry.drivers import sqlite_job_driver

        sqlite = sqlite_job_driver(tmp_path / "other.db", clock=clock)
        yield sqlite
        await sqlite.close()
        return
    from ferry.drivers import postgres_job_driver

    postgres = postgres_job_driver(postgres_dsn, schema=new_pg_schema(), clock=clock)
    yield postgres
    await postgres.close()


Reopen = Callable[[], Awaitable[JobDriver]]


@pytest.fixture
async def reopen(
    driver: JobDriver, clock: FrozenClock, postgres_dsn: str, pg_schema: str
) -> AsyncIterator[Reopen]:
    """A new driver on the test driver's store, as a process starting after a crash gets.
    The memory store is its driver object (nothing of it outlives a crash), so there the
    same driver is handed back."""
    opened: list[JobDriver] = []

    async def reopen() -> JobDriver:
        if driver.name == "memory":
            return driver
        from ferry.drivers import postgres_job_driver, sqlite_job_driver

        fresh = (
            sqlite_job_driver(driver.path, clock=clock)  # type: ignore[attr-defined]
            if driver.name == "sqlite"
            else postgres_job_driver(postgres_dsn, schema=pg_schema, clock=clock)
        )
        opened.append(fresh)
        return fresh

    yield reopen
    for fresh in opened:
        await fresh.close()


@pytest.fixture
def harness(driver: JobDriver, clock: FrozenClock) -> Iterator[Harness]:
    """A harness on the test's driver, installed as the ambient driver."""
    h = Harness(driver=driver, clock=clock)
    with h.installed():
        yield h


Append = Callable[[str, JsonValue], Awaitable[str]]


@pytest.fixture
def append(driver: JobDriver, postgres_dsn: str) -> Append:
    """Append an outbox entry the way the driver's outbox takes one: in a committed
    transaction of the application's connection, or (no transactions to join) at once."""

    async def append(type: str, payload: JsonValue) -> str:
        if driver.name == "sqlite":
            async with aiosqlite.connect(driver.path) as conn:  # type: ignore[attr-defined]
                await conn.execute("BEGIN IMMEDIATE")
                entry = await driver.outbox.append(type, payload, connection=conn)
                await conn.commit()
                return entry
        if driver.name != "postgres":
            return await driver.outbox.append(type, payload, connection=None)
        connection = await asyncpg.connect(postgres_dsn)
        try:
            async with connection.transaction():
                return await driver.outbox.append(type, payload, connection=connection)
        finally:
            await connection.close()

    return append
