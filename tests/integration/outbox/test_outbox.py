"""The outbox joins the caller's transaction, and the relay publishes at least once —
which the job's idempotency key turns into exactly one run."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from pydantic import BaseModel

from ferry import define_api, job
from ferry._clock import FrozenClock
from ferry._outbox import JobOutboxPublisher, OutboxRelay
from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import OutboxEntry, OutboxStore, RunFilter
from ferry.errors import FerryError
from ferry.testing import Harness

RECEIPTS_SENT: list[str] = []


class ReceiptInput(BaseModel):
    order_id: str


@job(
    input=ReceiptInput,
    idempotency_key=lambda i: f"receipt:{i.order_id}",
    name="outbox-test-send-receipt",
)
async def send_receipt(input: ReceiptInput) -> None:
    RECEIPTS_SENT.append(input.order_id)


API = define_api(jobs=[send_receipt])


class Crash(BaseException):
    """Stands for the relay process dying: nothing after it runs, nothing catches it."""


class CrashAfterPublish:
    """Publishes for real, then the relay dies before it can mark the entry."""

    def __init__(self) -> None:
        self.inner = JobOutboxPublisher(API)

    async def publish(self, entry: OutboxEntry) -> object:
        await self.inner.publish(entry)
        raise Crash


async def place_order(
    app_db: asyncpg.Connection, outbox: OutboxStore, schema: str, order_id: str
) -> None:
    """The business write and its side effect, in one transaction."""
    async with app_db.transaction():
        await app_db.execute(f'INSERT INTO "{schema}".orders (id) VALUES ($1)', order_id)
        await outbox.append(send_receipt.name, {"order_id": order_id}, connection=app_db)


async def outbox_rows(app_db: asyncpg.Connection, schema: str) -> list[asyncpg.Record]:
    return await app_db.fetch(f'SELECT * FROM "{schema}".outbox ORDER BY id')


async def test_a_rolled_back_append_never_existed(
    app_db: asyncpg.Connection, outbox: OutboxStore, pg_schema: str, driver: PostgresJobDriver
) -> None:
    with pytest.raises(RuntimeError):
        async with app_db.transaction():
            await app_db.execute(f'INSERT INTO "{pg_schema}".orders (id) VALUES ($1)', "o-1")
            await outbox.append(send_receipt.name, {"order_id": "o-1"}, connection=app_db)
            raise RuntimeError("payment declined")

    relay = OutboxRelay(source=driver, publisher=JobOutboxPublisher(API))
    assert (await relay.run_once()).claimed == 0
    assert await outbox_rows(app_db, pg_schema) == []
    assert await driver.introspect.list_runs(RunFilter()) == []


async def test_a_committed_append_is_published_as_one_job_with_the_payload_as_input(
    app_db: asyncpg.Connection,
    outbox: OutboxStore,
    driver: PostgresJobDriver,
    pg_schema: str,
    harness: Harness,
) -> None:
    await place_order(app_db, outbox, pg_schema, "o-2")
    relay = OutboxRelay(source=driver, publisher=JobOutboxPublisher(API))

    with harness.installed():
        done = await relay.run_once()

    assert (done.claimed, done.published, done.failed) == (1, 1, 0)
    [run] = await harness.driver.introspect.list_runs(RunFilter())
    detail = await harness.driver.introspect.get_run(run.id)
    assert detail is not None
    assert (run.name, detail.payload) == (send_receipt.name, {"order_id": "o-2"})
    [row] = await outbox_rows(app_db, pg_schema)
    assert row["published_at_ms"] is not None and row["claimed_by"] is None


async def test_a_relay_dying_between_publish_and_mark_redelivers_and_the_job_runs_once(
    app_db: asyncpg.Connection,
    outbox: OutboxStore,
    driver: PostgresJobDriver,
    pg_schema: str,
    harness: Harness,
    clock: FrozenClock,
) -> None:
    """Budget: one crash after a publish. Invariant: the entry is published again once
    its lease lapses, the second publish dedupes on the job's key, the body runs once."""
    RECEIPTS_SENT.clear()
    await place_order(app_db, outbox, pg_schema, "o-3")
    doomed = OutboxRelay(source=driver, publisher=CrashAfterPublish(), lease="30s")
    survivor = OutboxRelay(source=driver, publisher=JobOutboxPublisher(API), lease="30s")

    with harness.installed():
        with pytest.raises(Crash):
            await doomed.run_once()
        held = await survivor.run_once()
        clock.advance("31s")
        redelivered = await survivor.run_once()

    assert held.claimed == 0  # still leased to the relay that died
    assert (redelivered.claimed, redelivered.published) == (1, 1)
    [row] = await outbox_rows(app_db, pg_schema)
    assert (row["attempts"], row["published_at_ms"] is not None) == (2, True)
    await harness.drain()
    runs = await harness.driver.introspect.list_runs(RunFilter())
    assert [(r.name, r.state) for r in runs] == [(send_receipt.name, "completed")]
    assert RECEIPTS_SENT == ["o-3"]


async def test_a_failed_publish_keeps_the_entry_with_its_error_until_its_lease_lapses(
    app_db: asyncpg.Connection,
    outbox: OutboxStore,
    driver: PostgresJobDriver,
    pg_schema: str,
    harness: Harness,
    clock: FrozenClock,
) -> None:
    async with app_db.transaction():
        await outbox.append("no-such-job", {"order_id": "o-4"}, connection=app_db)
    relay = OutboxRelay(source=driver, publisher=JobOutboxPublisher(API), lease="10s")

    with harness.installed():
        first = await relay.run_once()
        during_lease = await relay.run_once()
        clock.advance("11s")
        after_lease = await relay.run_once()

    assert (first.claimed, first.failed) == (1, 1)
    assert during_lease.claimed == 0
    assert (after_lease.claimed, after_lease.failed) == (1, 1)
    [row] = await outbox_rows(app_db, pg_schema)
    assert row["published_at_ms"] is None and row["attempts"] == 2
    assert row["last_error"].startswith("X_JOB_UNKNOWN")


async def test_published_entries_are_pruned_after_retain_published(
    app_db: asyncpg.Connection,
    outbox: OutboxStore,
    driver: PostgresJobDriver,
    pg_schema: str,
    harness: Harness,
    clock: FrozenClock,
) -> None:
    await place_order(app_db, outbox, pg_schema, "o-5")
    relay = OutboxRelay(source=driver, publisher=JobOutboxPublisher(API), retain_published="1h")
    with harness.installed():
        await relay.run_once()
    await place_order(app_db, outbox, pg_schema, "o-6")  # not yet published

    clock.advance("59m")
    assert await relay.prune() == 0
    clock.advance("2m")
    assert await relay.prune() == 1
    assert [r["payload"] for r in await outbox_rows(app_db, pg_schema)] == ['{"order_id": "o-6"}']
    assert await outbox.pending() == 1


async def test_an_append_outside_a_transaction_or_connection_is_refused(
    app_db: asyncpg.Connection, outbox: OutboxStore, pg_schema: str
) -> None:
    with pytest.raises(FerryError) as no_transaction:
        await outbox.append(send_receipt.name, {"order_id": "o-7"}, connection=app_db)
    with pytest.raises(FerryError) as no_connection:
        await outbox.append(send_receipt.name, {"order_id": "o-7"}, connection=None)
    with pytest.raises(FerryError) as not_json:
        async with app_db.transaction():
            await outbox.append(send_receipt.name, {"at": object()}, connection=app_db)
    with pytest.raises(FerryError) as no_type:
        async with app_db.transaction():
            await outbox.append(" ", {}, connection=app_db)

    assert no_transaction.value.code == "X_INVARIANT"
    assert no_connection.value.code == "X_DRIVER_NO_TRANSACTIONS"
    assert not_json.value.code == "X_PAYLOAD_NOT_JSON"
    assert no_type.value.code == "X_INVARIANT"
    assert await outbox_rows(app_db, pg_schema) == []


async def test_a_commit_wakes_a_listening_relay(
    app_db: asyncpg.Connection, outbox: OutboxStore, pg_schema: str
) -> None:
    """The clock is frozen, so a wait can only end by a NOTIFY (the bound is a guard)."""
    wake = outbox.wake()
    async with asyncio.timeout(10):
        await wake.wait(60_000)  # the session announces itself once it listens
        assert wake.healthy

        await place_order(app_db, outbox, pg_schema, "o-8")

        assert await wake.wait(60_000)
