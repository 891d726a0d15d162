"""Every driver kind the suites build, in one registry: how to get a driver of that kind.

The conformance suite runs each of its tests once per entry, the entry's name — the
driver's ``name`` — being the test's id (``test_x[memory]``, ``test_x[postgres]``): adding
a driver to every behaviour test is one entry in ``DRIVERS``.

A kind builds a driver on the test's own store, or on another, empty one (where a drain
moves runs to), and opens a driver again on the store a driver uses (what a process
starting after a crash gets). A builder asks the test's ``request`` for what its store
needs — ``postgres_dsn`` and ``pg_schema`` (``new_pg_schema()`` for another store) for
Postgres, ``redis_url`` and ``redis_prefix`` (``new_redis_prefix()``) for Redis,
``tmp_path`` for SQLite — only
ever for a plain (not async) fixture, as it runs inside the async ``driver`` fixture. It
builds without connecting: a driver opens on first use. ``options`` are those every
driver takes (``max_payload_bytes``). A durable kind also names the environment a
``ferry`` process reaches a driver's store with (``DURABLE``: the kinds the chaos suite
kills workers on).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Protocol

import pytest

from ferry._clock import Clock
from ferry.drivers import (
    PostgresJobDriver,
    RedisJobDriver,
    SqliteJobDriver,
    memory_job_driver,
    postgres_job_driver,
    redis_job_driver,
    sqlite_job_driver,
)
from ferry.drivers.protocol import JobDriver

POSTGRES_POOL_MAX_SIZE = 40
"""Room for the contention tests' concurrent calls; a connection opens only when needed."""


class DriverKind(Protocol):
    """How the tests get drivers of one kind."""

    durable: bool
    """Whether a store outlives the process (and another process reaches it)."""

    def build(
        self, request: pytest.FixtureRequest, clock: Clock, *, another: bool, **options: Any
    ) -> JobDriver:
        """A driver on the test's store, or (``another``) on a new, empty one."""
        ...

    def reopen(self, driver: JobDriver, request: pytest.FixtureRequest, clock: Clock) -> JobDriver:
        """A new driver on ``driver``'s store — ``driver`` itself where the store lives in
        the driver object (nothing of it would outlive a crash)."""
        ...

    def process_env(self, driver: JobDriver, request: pytest.FixtureRequest) -> dict[str, str]:
        """``DATABASE_URL`` (and ``FERRY_SCHEMA`` where the store is named by it) for a
        ``ferry`` process on ``driver``'s store; refused (``TypeError``) for a kind no other
        process can reach."""
        ...


def _store(request: pytest.FixtureRequest, fixture: str, *, another: bool) -> str:
    """The test's store name (``fixture``), or (``another``) a new one from the
    ``new_<fixture>`` fixture."""
    if another:
        new: Callable[[], str] = request.getfixturevalue(f"new_{fixture}")
        return new()
    return str(request.getfixturevalue(fixture))


class Memory:
    """Every store in its driver object: each build is a new, empty store."""

    durable = False

    def build(
        self, request: pytest.FixtureRequest, clock: Clock, *, another: bool, **options: Any
    ) -> JobDriver:
        return memory_job_driver(clock=clock, **options)

    def reopen(self, driver: JobDriver, request: pytest.FixtureRequest, clock: Clock) -> JobDriver:
        return driver

    def process_env(self, driver: JobDriver, request: pytest.FixtureRequest) -> dict[str, str]:
        raise TypeError("a memory store lives in its process: no other process reaches it")


class Postgres:
    """A store is a schema: the test's ``pg_schema``, or another from ``new_pg_schema``."""

    durable = True

    def build(
        self, request: pytest.FixtureRequest, clock: Clock, *, another: bool, **options: Any
    ) -> JobDriver:
        schema = _store(request, "pg_schema", another=another)
        return self._on(schema, request, clock, **options)

    def reopen(self, driver: JobDriver, request: pytest.FixtureRequest, clock: Clock) -> JobDriver:
        assert isinstance(driver, PostgresJobDriver)
        return self._on(driver.schema, request, clock)

    def process_env(self, driver: JobDriver, request: pytest.FixtureRequest) -> dict[str, str]:
        assert isinstance(driver, PostgresJobDriver)
        return {
            "DATABASE_URL": request.getfixturevalue("postgres_dsn"),
            "FERRY_SCHEMA": driver.schema,
        }

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


class Redis:
    """A store is a key prefix on the session's server: the test's ``redis_prefix``, or
    another from ``new_redis_prefix``."""

    durable = True

    def build(
        self, request: pytest.FixtureRequest, clock: Clock, *, another: bool, **options: Any
    ) -> JobDriver:
        prefix = _store(request, "redis_prefix", another=another)
        return self._on(prefix, request, clock, **options)

    def reopen(self, driver: JobDriver, request: pytest.FixtureRequest, clock: Clock) -> JobDriver:
        assert isinstance(driver, RedisJobDriver)
        return self._on(driver.prefix, request, clock)

    def process_env(self, driver: JobDriver, request: pytest.FixtureRequest) -> dict[str, str]:
        assert isinstance(driver, RedisJobDriver)
        return {"DATABASE_URL": request.getfixturevalue("redis_url"), "FERRY_SCHEMA": driver.prefix}

    def _on(
        self, prefix: str, request: pytest.FixtureRequest, clock: Clock, **options: Any
    ) -> JobDriver:
        return redis_job_driver(
            request.getfixturevalue("redis_url"), prefix=prefix, clock=clock, **options
        )


class Sqlite:
    """A store is a file in the test's temporary directory: ``ferry.db``, or ``other.db``."""

    durable = True

    def build(
        self, request: pytest.FixtureRequest, clock: Clock, *, another: bool, **options: Any
    ) -> JobDriver:
        directory = request.getfixturevalue("tmp_path")
        file = directory / ("other.db" if another else "ferry.db")
        return sqlite_job_driver(file, clock=clock, **options)

    def reopen(self, driver: JobDriver, request: pytest.FixtureRequest, clock: Clock) -> JobDriver:
        assert isinstance(driver, SqliteJobDriver)
        return sqlite_job_driver(driver.path, clock=clock)

    def process_env(self, driver: JobDriver, request: pytest.FixtureRequest) -> dict[str, str]:
        assert isinstance(driver, SqliteJobDriver)
        return {"DATABASE_URL": f"sqlite:///{driver.path}"}


DRIVERS: dict[str, DriverKind] = {
    "memory": Memory(),
    "postgres": Postgres(),
    "redis": Redis(),
    "sqlite": Sqlite(),
}
"""Every shipped driver kind, by its driver's ``name`` (the conformance test ids)."""

DURABLE = [name for name, kind in DRIVERS.items() if kind.durable]
"""The kinds whose store outlives a process: where the chaos suite kills workers."""


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
