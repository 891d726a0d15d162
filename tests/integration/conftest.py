"""Fixtures the integration suites share: a frozen clock, an opened Postgres driver on
this test's schema and that clock, and a hand-cranked harness on both."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from ferry._clock import FrozenClock
from ferry.drivers import PostgresJobDriver, postgres_job_driver
from ferry.testing import Harness


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
async def driver(
    postgres_dsn: str, pg_schema: str, clock: FrozenClock
) -> AsyncIterator[PostgresJobDriver]:
    """An opened driver on this test's schema and frozen clock."""
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, clock=clock)
    await driver.open()
    yield driver
    await driver.close()


@pytest.fixture
def harness(driver: PostgresJobDriver, clock: FrozenClock) -> Harness:
    """Runs due runs by hand, fast-forwarding the frozen clock through retry delays."""
    return Harness(driver=driver, clock=clock, tasks=[])
