"""Fixtures: a Postgres webhook ledger on the frozen clock, and a local receiver."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from ferry._clock import FrozenClock
from ferry._webhooks.postgres_ledger import PostgresWebhookLedger, postgres_webhook_ledger

from .receiver import Receiver


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
