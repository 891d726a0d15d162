"""The conformance suite runs every test against every driver in ``support.drivers.DRIVERS``.

A driver is a product feature only if it passes the same behaviour tests as the others:
``driver`` hands each test a fresh, empty driver of each kind on the test's frozen clock
(the shared ``clock`` and ``harness`` fixtures come from ``support.plugin``);
``other_driver`` and ``reopen`` reach a second store and the same store again through the
same registry. Adding a driver is one entry there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import aiosqlite
import asyncpg
import pytest
from support.drivers import DRIVERS, built

from ferry._clock import FrozenClock
from ferry.drivers import SqliteJobDriver
from ferry.drivers.protocol import JobDriver, JsonValue


@pytest.fixture(params=list(DRIVERS))
async def driver(request: pytest.FixtureRequest, clock: FrozenClock) -> AsyncIterator[JobDriver]:
    """A fresh, empty driver of each kind, on the test's frozen clock; a test marked
    ``@pytest.mark.driver_options(max_payload_bytes=100)`` gets its drivers built so."""
    marked = request.node.get_closest_marker("driver_options")
    options = marked.kwargs if marked is not None else {}
    async with built(request.param, request, clock, **options) as each:
        yield each


@pytest.fixture
async def other_driver(
    driver: JobDriver, request: pytest.FixtureRequest, clock: FrozenClock
) -> AsyncIterator[JobDriver]:
    """A second, empty store of the test driver's kind on the same clock (Postgres: another
    schema): where a drain moves the test driver's runs to."""
    async with built(driver.name, request, clock, another=True) as other:
        yield other


Reopen = Callable[[], Awaitable[JobDriver]]


@pytest.fixture
async def reopen(
    driver: JobDriver, request: pytest.FixtureRequest, clock: FrozenClock
) -> AsyncIterator[Reopen]:
    """A new driver on the test driver's store, as a process starting after a crash gets.
    The memory store is its driver object (nothing of it outlives a crash), so there the
    same driver is handed back."""
    opened: list[JobDriver] = []

    async def reopen() -> JobDriver:
        again = DRIVERS[driver.name].reopen(driver, request, clock)
        if again is not driver:
            opened.append(again)
        return again

    yield reopen
    for again in opened:
        await again.close()


Append = Callable[[str, JsonValue], Awaitable[str]]


@pytest.fixture
def append(driver: JobDriver, request: pytest.FixtureRequest) -> Append:
    """Append an outbox entry the way the driver's outbox takes one: in a committed
    transaction of the application's connection, or (no transactions to join) at once."""

    async def append(type: str, payload: JsonValue) -> str:
        if isinstance(driver, SqliteJobDriver) and driver.name == "sqlite":
            async with aiosqlite.connect(driver.path) as conn:
                await conn.execute("BEGIN IMMEDIATE")
                entry = await driver.outbox.append(type, payload, connection=conn)
                await conn.commit()
                return entry
        if driver.name != "postgres":
            return await driver.outbox.append(type, payload, connection=None)
        connection = await asyncpg.connect(request.getfixturevalue("postgres_dsn"))
        try:
            async with connection.transaction():
                return await driver.outbox.append(type, payload, connection=connection)
        finally:
            await connection.close()

    return append
