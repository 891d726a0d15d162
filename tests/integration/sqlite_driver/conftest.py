"""Fixtures for the SQLite driver's own tests: a fresh file per test, drivers on it (each
with its own connections, as separate processes would have), and ``ferry`` processes."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from ferry._clock import FrozenClock
from ferry._jobs.facade import set_job_driver
from ferry.drivers import SqliteJobDriver, sqlite_job_driver

from .app import TABLES
from .processes import Roles

DriverFactory = Callable[..., SqliteJobDriver]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """The test's database file (absent until a driver opens it)."""
    return tmp_path / "ferry.db"


@pytest.fixture
def db_url(db_path: Path) -> str:
    """The test's file as a URL (an absolute path: four slashes)."""
    return f"sqlite:///{db_path}"


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
async def drivers(db_path: Path) -> AsyncIterator[DriverFactory]:
    """Build drivers on the test's file; every one is closed afterwards."""
    built: list[SqliteJobDriver] = []

    def build(**options: object) -> SqliteJobDriver:
        driver = sqlite_job_driver(db_path, **options)  # type: ignore[arg-type]
        built.append(driver)
        return driver

    yield build
    for driver in built:
        await driver.close()


@pytest.fixture
async def driver(drivers: DriverFactory, clock: FrozenClock) -> SqliteJobDriver:
    """An opened driver on the test's file and frozen clock."""
    driver = drivers(clock=clock)
    await driver.open()
    return driver


@pytest.fixture
def read(db_path: Path) -> Callable[[str], list[tuple[object, ...]]]:
    """Read rows of the test's file the way an operator would, with the sqlite3 module."""

    def query(sql: str) -> list[tuple[object, ...]]:
        connection = sqlite3.connect(db_path, timeout=30)
        try:
            return connection.execute(sql).fetchall()
        finally:
            connection.close()

    return query


@pytest.fixture
async def roles(db_url: str, db_path: Path, tmp_path: Path) -> AsyncIterator[Roles]:
    """``ferry`` processes on the test's file (with the app's intervals table in it); their
    logs print when the test fails."""
    migrated = sqlite_job_driver(db_path)
    await migrated.open()
    await migrated.close()
    connection = sqlite3.connect(db_path)
    connection.executescript(TABLES)
    connection.close()
    roles = Roles(db_url, tmp_path)
    yield roles
    await roles.close()
    print(roles.logs())


@pytest.fixture
async def enqueuer(roles: Roles) -> AsyncIterator[SqliteJobDriver]:
    """A driver in this test process on the same file, set as the job driver."""
    driver = sqlite_job_driver(roles.url)
    set_job_driver(driver)
    yield driver
    set_job_driver(None)
    await driver.close()
