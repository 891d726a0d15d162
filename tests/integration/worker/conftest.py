"""Fixtures for the worker tests: the real clock (the processes run on it), and the shared
``driver`` with the app's effect tables, installed as the job driver to enqueue through.
The worker processes themselves come from the shared ``fleet`` (``support.processes``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest

from ferry._clock import Clock, SystemClock
from ferry._jobs.facade import set_job_driver
from ferry.drivers import PostgresJobDriver

from .app import EFFECT_TABLES


@asynccontextmanager
async def app_installed(driver: PostgresJobDriver, dsn: str) -> AsyncIterator[None]:
    """The app's effect tables in the driver's schema, and the driver as the job driver."""
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(EFFECT_TABLES.format(schema=f'"{driver.schema}"'))
    finally:
        await connection.close()
    previous = set_job_driver(driver)
    try:
        yield
    finally:
        set_job_driver(previous)


@pytest.fixture
def clock() -> Clock:
    return SystemClock()


@pytest.fixture
async def driver(driver: PostgresJobDriver, postgres_dsn: str) -> AsyncIterator[PostgresJobDriver]:
    """The shared driver (on the real clock here), with the app's tables, installed."""
    async with app_installed(driver, postgres_dsn):
        yield driver
