"""Every driver kind the suites build, in one registry: how to get a driver of that kind.

The conformance suite runs each of its tests once per entry, the entry's name — the
driver's ``name`` — being the test's id (``test_x[memory]``, ``test_x[postgres]``): adding
a driver to every behaviour test is one entry in ``DRIVERS``.

A kind builds a driver on the test's own store, or on another, empty one (where a drain
moves runs to), and opens a driver again on the store a driver uses (what a process
starting after a crash gets). A builder asks the test's ``request`` for what its store
needs — ``postgres_dsn`` and ``pg_schema`` (``new_pg_schema()`` for another store) for
Postgres; a temporary directory or a server for another kind — only ever for a plain (not
async) fixture, as it runs inside the async ``driver`` fixture. It builds without
connecting: a driver opens on first use. ``options`` are those every driver takes
(``max_payload_bytes``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol

import pytest

from ferry._clock import Clock
from ferry.drivers import (
    PostgresJobDriver,
    SqliteJobDriver,
    memory_job_driver,
    postgres_job_driver,
    sqlite_job_driver,
)
from ferry.drivers.protocol import JobDriver

POSTGRES_POOL_MAX_SIZE = 40
"""Room for the contention tests' concurrent calls; a connection opens only when needed."""


class DriverKind(Protocol):
    """How the tests get drivers of one kind."""

    def build(
        self, request: pytest.FixtureRequest, clock: Clock, *, another: bool, **options: Any
    ) -> JobDriver:
        """A driver on the test's store, or (``another``) on a new, empty one."""
        ...

    def reopen(self, driver: JobDriver, request: pytest.FixtureRequest, clock: Clock) -> JobDriver:
        """A new driver on ``driver``'s store — ``driver`` itself where the store lives in
        the driver object (nothing of it would outlive a crash)."""
        ...


class Memory:
    """Every store in its driver object: each build is a new, empty store."""

    def build(
        self, request: pytest.FixtureRequest, clock: Clock, *, another: bool, **options: Any
    ) -> JobDriver:
        return memory_job_driver(clock=clock, **options)

    def reopen(self, driver: JobDriver, request: pytest.FixtureRequest, clock: Clock) -> JobDriver:
        return driver


class Postgres:
    """A store is a schema: the test's ``pg_schema``, or another from ``new_pg_schema``."""

    def build(
        self, request: pytest.FixtureRequest, clock: Clock, *, another: bool, **options: Any
    ) -> JobDriver:
        schema = (
            request.getfixturevalue("new_pg_schema")()
            if another
            else request.getfixturevalue("pg_schema")
        )
        return self._on(schema, request, clock, **options)

    def reopen(self, driver: JobDriver, request: pytest.FixtureRequest, clock: Clock) -> JobDriver:
        assert isinstance(driver, PostgresJobDriver)
        return self._on(driver.schema, request, clock)

    def _on(
        self, schema: str, request: pytest.FixtureRequest, clock: Clock, **options: Any
    ) -> JobDriver:
        return postgres_job_driver(
            request.getfixturevalue("postgres_dsn"),
            schema=schema,
            clock=clock,
            pool_max_size=POSTGRES_POOL_MAX_SIZE,
            **options,
        )


class Sqlite:
    """A store is a file in the test's temporary directory: ``ferry.db``, or ``other.db``."""

    def build(
        self, request: pytest.FixtureRequest, clock: Clock, *, another: bool, **options: Any
    ) -> JobDriver:
        directory = request.getfixturevalue("tmp_path")
        file = directory / ("other.db" if another else "ferry.db")
        return sqlite_job_driver(file, clock=clock, **options)

    def reopen(self, driver: JobDriver, request: pytest.FixtureRequest, clock: Clock) -> JobDriver:
        assert isinstance(driver, SqliteJobDriver)
        return sqlite_job_driver(driver.path, clock=clock)


DRIVERS: dict[str, DriverKind] = {
    "memory": Memory(),
    "postgres": Postgres(),
    "sqlite": Sqlite(),
}
"""Every shipped driver kind, by its driver's ``name`` (the conformance test ids)."""


@asynccontextmanager
async def built(
    kind: str,
    request: pytest.FixtureRequest,
    clock: Clock,
    *,
    another: bool = False,
    **options: Any,
) -> AsyncIterator[JobDriver]:
    """A driver of ``kind`` on the test's store (or ``another``), closed when the block ends."""
    driver = DRIVERS[kind].build(request, clock, another=another, **options)
    try:
        yield driver
    finally:
        await driver.close()
