"""Fixtures: the Postgres driver's webhook ledger on the frozen clock, a local receiver."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from ferry._webhooks.ledger import RecordsWebhookLedger, WebhookLedger
from ferry.drivers import PostgresJobDriver

from .receiver import Receiver


@pytest.fixture
def pg_ledger(driver: PostgresJobDriver) -> WebhookLedger:
    """The ledger of the test's Postgres driver (the one the harness runs on)."""
    return RecordsWebhookLedger(driver)


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    receiver = Receiver()
    await receiver.start()
    yield receiver
    await receiver.close()
