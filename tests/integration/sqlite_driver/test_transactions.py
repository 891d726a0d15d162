"""The outbox and a transactional enqueue join the application's own SQLite transaction:
committed, the entry (or run) exists; rolled back, it never did; anything but an aiosqlite
connection on the driver's file is refused, naming what was given."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import aiosqlite
import pytest

from ferry import FerryError
from ferry.drivers import SqliteJobDriver
from ferry.drivers.protocol import EnqueueRequest, RunFilter

from .conftest import DriverFactory


def _request(key: str, connection: object) -> EnqueueRequest:
    return EnqueueRequest(
        name="orders.receipt",
        queue="default",
        payload={"order": key},
        idempotency_key=f"receipt:{key}",
        max_attempts=3,
        connection=connection,
    )


async def _orders(conn: aiosqlite.Connection) -> None:
    await conn.execute("CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY)")
    await conn.commit()


async def test_an_outbox_entry_exists_exactly_when_the_business_write_commits(
    driver: SqliteJobDriver, db_path: Path
) -> None:
    async with aiosqlite.connect(db_path) as conn:
        await _orders(conn)
        await conn.execute("BEGIN IMMEDIATE")
        await conn.execute("INSERT INTO orders VALUES ('o1')")
        await driver.outbox.append("send_receipt", {"order": "o1"}, connection=conn)
        await conn.rollback()
        assert await driver.outbox.pending() == 0

        await conn.execute("BEGIN IMMEDIATE")
        await conn.execute("INSERT INTO orders VALUES ('o2')")
        entry = await driver.outbox.append("send_receipt", {"order": "o2"}, connection=conn)
        assert await driver.outbox.pending() == 0, "nothing is visible before the commit"
        await conn.commit()
    assert await driver.outbox.pending() == 1
    [claimed] = await driver.outbox.claim(relay_id="r1", lease_ms=30_000, limit=10)
    assert (claimed.id, claimed.type, claimed.payload) == (entry, "send_receipt", {"order": "o2"})


async def test_a_transactional_enqueue_commits_and_rolls_back_with_the_application(
    driver: SqliteJobDriver, db_path: Path
) -> None:
    async with aiosqlite.connect(db_path) as conn:
        await _orders(conn)
        await conn.execute("BEGIN IMMEDIATE")
        await conn.execute("INSERT INTO orders VALUES ('o1')")
        [lost] = await driver.enqueue_many([_request("o1", conn)])
        await conn.rollback()

        await conn.execute("BEGIN IMMEDIATE")
        await conn.execute("INSERT INTO orders VALUES ('o2')")
        kept, again = await driver.enqueue_many([_request("o2", conn), _request("o2", conn)])
        await conn.commit()
    assert again == type(again)(kept.job_id, deduplicated=True)
    [run] = await driver.introspect.list_runs(RunFilter())
    assert run.id == kept.job_id  # (the rolled-back run's id may be reused: nobody saw it)
    detail = await driver.introspect.get_run(run.id)
    assert detail is not None and detail.payload == {"order": "o2"}
    assert lost.deduplicated is False
    # The same key enqueued later resolves to the committed run.
    async with aiosqlite.connect(db_path) as conn:
        [later] = await driver.enqueue_many([_request("o2", conn)])
        await conn.commit()
    assert (later.job_id, later.deduplicated) == (kept.job_id, True)


@pytest.mark.parametrize("given", ["sqlite3", "none", "object"])
async def test_anything_but_an_aiosqlite_connection_is_refused(
    driver: SqliteJobDriver, db_path: Path, given: str
) -> None:
    connection = {
        "sqlite3": lambda: sqlite3.connect(db_path),
        "none": lambda: None,
        "object": lambda: object(),
    }[given]()
    with pytest.raises(FerryError) as appended:
        await driver.outbox.append("t", {}, connection=connection)
    assert appended.value.code == "X_DRIVER_NO_TRANSACTIONS"
    assert "not an aiosqlite connection" in appended.value.message
    if given != "none":  # connection=None is the driver's own transaction for an enqueue
        with pytest.raises(FerryError) as enqueued:
            await driver.enqueue(_request("x", connection))
        assert enqueued.value.code == "X_DRIVER_NO_TRANSACTIONS"
        assert '"orders.receipt"' in enqueued.value.message
    assert await driver.outbox.pending() == 0


async def test_a_connection_to_another_file_is_refused(
    driver: SqliteJobDriver, tmp_path: Path
) -> None:
    async with aiosqlite.connect(tmp_path / "other.db") as other:
        await other.execute("BEGIN IMMEDIATE")
        with pytest.raises(FerryError) as refused:
            await driver.outbox.append("t", {}, connection=other)
    assert refused.value.code == "X_DRIVER_NO_TRANSACTIONS"
    assert "other.db" in refused.value.message and driver.path in refused.value.message


async def test_an_append_outside_a_transaction_is_refused(
    driver: SqliteJobDriver, db_path: Path
) -> None:
    async with aiosqlite.connect(db_path) as conn:
        with pytest.raises(FerryError) as refused:
            await driver.outbox.append("t", {}, connection=conn)
    assert refused.value.code == "X_INVARIANT"
    assert "outside a transaction" in refused.value.message
    assert await driver.outbox.pending() == 0


async def test_a_fresh_file_is_migrated_by_an_enqueue_before_the_transaction_begins(
    drivers: DriverFactory, db_path: Path
) -> None:
    fresh = drivers()
    async with aiosqlite.connect(db_path) as conn:
        # sqlite3 begins the transaction implicitly at the enqueue's INSERT: the commit is
        # still the application's.
        result = await fresh.enqueue(_request("o1", conn))
        await conn.commit()
    assert await fresh.introspect.get_run(result.job_id) is not None


async def test_a_fresh_file_inside_the_applications_transaction_is_refused_not_waited_on(
    drivers: DriverFactory, db_path: Path
) -> None:
    """Migrating takes the write lock the application's transaction holds: waiting would
    end in X_DB_BUSY after the busy timeout, so the driver refuses at once instead."""
    fresh = drivers()
    async with aiosqlite.connect(db_path) as conn:
        await _orders(conn)
        await conn.execute("BEGIN IMMEDIATE")
        await conn.execute("INSERT INTO orders VALUES ('o1')")
        with pytest.raises(FerryError) as refused:
            await fresh.outbox.append("t", {"n": 1}, connection=conn)
        await conn.rollback()
    assert refused.value.code == "X_MIGRATIONS_PENDING"
    assert "0001_initial" in refused.value.message and "driver.open()" in refused.value.fix
    await fresh.open()
    async with aiosqlite.connect(db_path) as conn:
        await conn.execute("BEGIN IMMEDIATE")
        await fresh.outbox.append("t", {"n": 1}, connection=conn)
        await conn.commit()
    assert await fresh.outbox.pending() == 1
