"""Fixtures: a Postgres driver on a frozen clock, a hand-cranked worker, a receiver."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from ferry.clock import FrozenClock
from ferry.drivers.postgres import PostgresJobDriver, postgres_job_driver
from ferry.testing.harness import Harness
from ferry.webhooks import PostgresWebhookLedger, postgres_webhook_ledger

from .receiver import Receiver


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
async def driver(
    postgres_dsn: str, pg_schema: str, clock: FrozenClock
) -> AsyncIterator[PostgresJobDriver]:
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, clock=clock)
    await driver.open()
    yield driver
    await driver.close()


@pytest.fixture
def harness(driver: PostgresJobDriver, clock: FrozenClock) -> Harness:
    """Runs due runs by hand, fast-forwarding the frozen clock through retry delays."""
    return Harness(driver=driver, clock=clock, tasks=[])


@pytest.fixture
async def pg_ledger(
    postgres_dsn: str, pg_schema: str, clock: FrozenClock
) -> AsyncIterator[PostgresWebhookLedger]:
    ledger = postgres_webhook_ledger(postgres_dsn, schema=pg_schema, clock=clock)
    yield ledger
    await ledger.close()


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    receiver = Receiver()
    await receiver.start()
    yield receiver
    await receiver.close()
