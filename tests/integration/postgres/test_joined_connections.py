"""Commit is the enqueue, through every connection an application holds: asyncpg, psycopg 3
(async and sync), SQLAlchemy (async sessions over asyncpg and psycopg, sync sessions over
psycopg). Django's connection has the same three tests in ``examples/django_shop``.

Each kind writes a business row and enqueues (or appends to the outbox) in one transaction
of the application's own. Committed, both exist and a worker waiting on the driver's wake
is woken at once (its wait is a minute long: only the NOTIFY can end it within the bound);
rolled back, neither exists. Sync kinds run their transaction on a thread of their own,
through ``enqueue_sync``/``append_sync``, as sync application code does.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

import asyncpg
import psycopg
import pytest
from pydantic import BaseModel
from sqlalchemy import create_engine, text
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine
from sqlalchemy.orm import Session
from support.wake import listening, woken_by

from ferry import job
from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import EnqueueResult


class Receipt(BaseModel):
    order_id: int


@job(input=Receipt, idempotency_key=lambda i: f"receipt:{i.order_id}", name="joined.receipt")
async def send_receipt(input: Receipt) -> None:
    """Never run here: these tests are about the enqueue."""


@job(
    input=Receipt,
    idempotency_key=lambda i: f"resend:{i.order_id}",
    name="joined.resend",
    dedupe="active",
)
async def resend_receipt(input: Receipt) -> None:
    """Never run here: a run of its key that has ended gives the key up to the next enqueue."""


_orders = itertools.count(1)


class Kind(Protocol):
    """One way an application holds its transaction."""

    async def write(
        self, order_id: int, *, then: str, fail: bool = False
    ) -> EnqueueResult | str | None:
        """In one transaction: insert the order row, then ``then`` ("enqueue", "resend" —
        an enqueue of the ``dedupe="active"`` job — or "append"); commit, or (``fail``)
        raise and roll back. Answers the enqueue's result or the entry id."""
        ...


class Failed(Exception):
    """The business write failed: the transaction rolls back."""


def _insert(schema: str) -> str:
    return f'INSERT INTO "{schema}".orders (id) VALUES ($1)'


class AsyncpgKind:
    def __init__(self, dsn: str, driver: PostgresJobDriver) -> None:
        self.dsn, self.driver = dsn, driver

    async def write(self, order_id: int, *, then: str, fail: bool = False) -> Any:
        connection = await asyncpg.connect(self.dsn)
        try:
            async with connection.transaction():
                await connection.execute(_insert(self.driver.schema), order_id)
                done = await _then(self.driver, then, order_id, connection)
                if fail:
                    raise Failed
                return done
        finally:
            await connection.close()


class PsycopgAsyncKind:
    def __init__(self, dsn: str, driver: PostgresJobDriver) -> None:
        self.dsn, self.driver = dsn, driver

    async def write(self, order_id: int, *, then: str, fail: bool = False) -> Any:
        async with (
            await psycopg.AsyncConnection.connect(self.dsn) as connection,
            connection.transaction(),
        ):
            await connection.execute(_insert(self.driver.schema).replace("$1", "%s"), (order_id,))
            done = await _then(self.driver, then, order_id, connection)
            if fail:
                raise Failed
            return done


class PsycopgSyncKind:
    def __init__(self, dsn: str, driver: PostgresJobDriver) -> None:
        self.dsn, self.driver = dsn, driver

    async def write(self, order_id: int, *, then: str, fail: bool = False) -> Any:
        def transaction() -> Any:
            with psycopg.connect(self.dsn) as connection, connection.transaction():
                connection.execute(_insert(self.driver.schema).replace("$1", "%s"), (order_id,))
                done = _then_sync(self.driver, then, order_id, connection)
                if fail:
                    raise Failed
                return done

        return await asyncio.to_thread(transaction)


class SqlAlchemyAsyncKind:
    def __init__(self, url: str, driver: PostgresJobDriver) -> None:
        self.url, self.driver = url, driver

    async def write(self, order_id: int, *, then: str, fail: bool = False) -> Any:
        engine = create_async_engine(self.url)
        try:
            async with AsyncSession(engine) as session, session.begin():
                await session.execute(
                    text(f'INSERT INTO "{self.driver.schema}".orders (id) VALUES (:id)'),
                    {"id": order_id},
                )
                done = await _then(self.driver, then, order_id, session)
                if fail:
                    raise Failed
                return done
        finally:
            await engine.dispose()


class SqlAlchemySyncKind:
    def __init__(self, url: str, driver: PostgresJobDriver) -> None:
        self.url, self.driver = url, driver

    async def write(self, order_id: int, *, then: str, fail: bool = False) -> Any:
        def transaction() -> Any:
            engine = create_engine(self.url)
            try:
                with Session(engine) as session, session.begin():
                    session.execute(
                        text(f'INSERT INTO "{self.driver.schema}".orders (id) VALUES (:id)'),
                        {"id": order_id},
                    )
                    done = _then_sync(self.driver, then, order_id, session)
                    if fail:
                        raise Failed
                    return done
            finally:
                engine.dispose()

        return await asyncio.to_thread(transaction)


async def _then(driver: PostgresJobDriver, then: str, order_id: int, connection: Any) -> Any:
    if then == "enqueue":
        return await send_receipt.enqueue({"order_id": order_id}, connection=connection)
    if then == "resend":
        return await resend_receipt.enqueue({"order_id": order_id}, connection=connection)
    return await driver.outbox.append(
        "joined.receipt", {"order_id": order_id}, connection=connection
    )


def _then_sync(driver: PostgresJobDriver, then: str, order_id: int, connection: Any) -> Any:
    if then == "enqueue":
        return send_receipt.enqueue_sync({"order_id": order_id}, connection=connection)
    if then == "resend":
        return resend_receipt.enqueue_sync({"order_id": order_id}, connection=connection)
    return driver.outbox.append_sync(
        "joined.receipt", {"order_id": order_id}, connection=connection
    )


def _url(dsn: str, dialect: str) -> str:
    return dsn.replace("postgresql://", f"postgresql+{dialect}://", 1)


KINDS: dict[str, Callable[[str, PostgresJobDriver], Kind]] = {
    "asyncpg": AsyncpgKind,
    "psycopg-async": PsycopgAsyncKind,
    "psycopg-sync": PsycopgSyncKind,
    "sqlalchemy-async-asyncpg": lambda dsn, d: SqlAlchemyAsyncKind(_url(dsn, "asyncpg"), d),
    "sqlalchemy-async-psycopg": lambda dsn, d: SqlAlchemyAsyncKind(_url(dsn, "psycopg"), d),
    "sqlalchemy-sync-psycopg": lambda dsn, d: SqlAlchemySyncKind(_url(dsn, "psycopg"), d),
}


@pytest.fixture(params=list(KINDS))
async def kind(
    request: pytest.FixtureRequest,
    driver: PostgresJobDriver,
    postgres_dsn: str,
    db: asyncpg.Connection,
) -> AsyncIterator[Kind]:
    """The application's ``orders`` table beside ferry's, and one kind of connection."""
    await db.execute(f'CREATE TABLE "{driver.schema}".orders (id bigint PRIMARY KEY)')
    yield KINDS[request.param](postgres_dsn, driver)


async def _count(db: asyncpg.Connection, query: str, *args: object) -> int:
    count: int = await db.fetchval(query, *args)
    return count


async def test_a_committed_enqueue_is_a_run_and_wakes_a_waiting_worker_at_once(
    kind: Kind, driver: PostgresJobDriver, harness: Any, db: asyncpg.Connection
) -> None:
    wake, _ = await listening(driver)
    order_id = next(_orders)
    written: list[Any] = []

    async def commit() -> None:
        written.append(await kind.write(order_id, then="enqueue"))

    assert await woken_by(wake, commit()), "the commit's NOTIFY woke the worker"
    [result] = written
    assert isinstance(result, EnqueueResult) and not result.deduplicated
    run = await driver.introspect.get_run(result.job_id)
    assert run is not None and run.summary.state == "queued"
    schema = driver.schema
    assert await _count(db, f'SELECT count(*) FROM "{schema}".orders WHERE id = $1', order_id)


async def test_a_rolled_back_enqueue_leaves_neither_the_row_nor_the_run(
    kind: Kind, driver: PostgresJobDriver, harness: Any, db: asyncpg.Connection
) -> None:
    order_id = next(_orders)
    with pytest.raises(Failed):
        await kind.write(order_id, then="enqueue", fail=True)
    schema = driver.schema
    assert not await _count(db, f'SELECT count(*) FROM "{schema}".orders WHERE id = $1', order_id)
    key = send_receipt.idempotency_key_for({"order_id": order_id})
    assert not await _count(
        db, f'SELECT count(*) FROM "{schema}".jobs WHERE idempotency_key = $1', key
    )


async def test_an_outbox_entry_commits_with_the_row_and_rolls_back_with_it(
    kind: Kind, driver: PostgresJobDriver, harness: Any, db: asyncpg.Connection
) -> None:
    relay_wake = driver.outbox.wake()
    await relay_wake.wait(0)  # the (re)connect's announcement, consumed
    committed, rolled_back = next(_orders), next(_orders)
    written: list[Any] = []

    async def commit() -> None:
        written.append(await kind.write(committed, then="append"))

    waiter = asyncio.create_task(relay_wake.wait(60_000))
    await commit()
    assert await asyncio.wait_for(waiter, 10), "the commit's NOTIFY woke the relay"
    with pytest.raises(Failed):
        await kind.write(rolled_back, then="append", fail=True)
    schema = driver.schema
    entries = await db.fetch(f'SELECT id::text AS id, payload FROM "{schema}".outbox ORDER BY id')
    assert [(e["id"], e["payload"]) for e in entries] == [
        (written[0], f'{{"order_id": {committed}}}')
    ]
    rows = await db.fetch(f'SELECT id FROM "{schema}".orders ORDER BY id')
    assert [r["id"] for r in rows] == [committed]


async def test_a_dedupe_rule_moves_an_ended_runs_key_only_with_the_callers_commit(
    kind: Kind, driver: PostgresJobDriver, harness: Any
) -> None:
    order_id = next(_orders)
    key = resend_receipt.idempotency_key_for({"order_id": order_id})
    ended = await resend_receipt.enqueue({"order_id": order_id})
    assert await driver.introspect.cancel_run(ended.job_id) == "cancelled"

    with pytest.raises(Failed):
        await kind.write(order_id, then="resend", fail=True)
    kept = await driver.introspect.get_run(ended.job_id)
    assert kept is not None and kept.idempotency_key == key  # rolled back: nothing moved

    result = await kind.write(order_id, then="resend")
    assert isinstance(result, EnqueueResult) and not result.deduplicated
    moved = await driver.introspect.get_run(ended.job_id)
    assert moved is not None
    assert moved.idempotency_key.rstrip(" ") == f"{key} [superseded: run {ended.job_id}]"
    new = await driver.introspect.get_run(result.job_id)
    assert new is not None and new.idempotency_key == key
