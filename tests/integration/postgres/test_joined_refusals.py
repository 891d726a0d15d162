"""A connection the Postgres driver cannot join is refused by name — what was passed and
what is accepted — before anything is written; and the sync entry points run where they
must (the caller's thread for its own connection, the driver's loop without one)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import aiosqlite
import asyncpg
import psycopg
import pytest
from pydantic import BaseModel
from sqlalchemy import create_engine
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine
from sqlalchemy.orm import Session

from ferry import job
from ferry.drivers import PostgresJobDriver
from ferry.errors import FerryError


class Receipt(BaseModel):
    order_id: int


@job(input=Receipt, idempotency_key=lambda i: f"receipt:{i.order_id}", name="refusals.receipt")
async def send_receipt(input: Receipt) -> None:
    """Never run here."""


def _url(dsn: str, dialect: str) -> str:
    return dsn.replace("postgresql://", f"postgresql+{dialect}://", 1)


async def _jobs(db: asyncpg.Connection, schema: str) -> int:
    count: int = await db.fetchval(f'SELECT count(*) FROM "{schema}".jobs')
    return count


async def test_a_sqlite_connection_is_refused_naming_it_and_what_is_accepted(
    driver: PostgresJobDriver, harness: Any, tmp_path: Path, db: asyncpg.Connection
) -> None:
    plain = sqlite3.connect(tmp_path / "app.db")
    async with aiosqlite.connect(tmp_path / "app.db") as wrapped:
        for connection, named in ((plain, "sqlite3.Connection"), (wrapped, "aiosqlite")):
            with pytest.raises(FerryError) as refused:
                await send_receipt.enqueue({"order_id": 1}, connection=connection)
            error = refused.value
            assert error.code == "X_DRIVER_NO_TRANSACTIONS"
            assert named in error.message and 'enqueue of job "refusals.receipt"' in error.message
            assert "psycopg 3 Connection" in error.fix and "Django" in error.fix
    plain.close()
    assert await _jobs(db, driver.schema) == 0


async def test_a_sqlalchemy_session_on_another_database_is_refused(
    driver: PostgresJobDriver, harness: Any, tmp_path: Path
) -> None:
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'app.db'}")
    try:
        async with AsyncSession(engine) as session:
            with pytest.raises(FerryError) as refused:
                await send_receipt.enqueue({"order_id": 1}, connection=session)
    finally:
        await engine.dispose()
    assert refused.value.code == "X_DRIVER_NO_TRANSACTIONS"
    assert "a SQLAlchemy AsyncSession on sqlite" in refused.value.message


async def test_closed_connections_and_sessions_are_refused(
    driver: PostgresJobDriver, harness: Any, postgres_dsn: str
) -> None:
    closed_psycopg = await psycopg.AsyncConnection.connect(postgres_dsn)
    await closed_psycopg.close()
    engine = create_async_engine(_url(postgres_dsn, "asyncpg"))
    try:
        closed_connection = await engine.connect()
        await closed_connection.close()
        closed_session = AsyncSession(engine, close_resets_only=False)
        await closed_session.close()
        for connection, named in (
            (closed_psycopg, "a psycopg AsyncConnection"),
            (closed_connection, "a SQLAlchemy AsyncConnection"),
            (closed_session, "a SQLAlchemy AsyncSession"),
        ):
            with pytest.raises(FerryError) as refused:
                await send_receipt.enqueue({"order_id": 1}, connection=connection)
            assert refused.value.code == "X_CONNECTION_CLOSED", named
            assert f"{named} that is closed" in refused.value.message
    finally:
        await engine.dispose()


async def test_an_outbox_append_outside_a_transaction_is_refused(
    driver: PostgresJobDriver, postgres_dsn: str, db: asyncpg.Connection
) -> None:
    def append_without_begin() -> FerryError:
        engine = create_engine(_url(postgres_dsn, "psycopg"))
        try:
            with Session(engine) as session, pytest.raises(FerryError) as refused:
                driver.outbox.append_sync("receipt", {"order_id": 1}, connection=session)
            return refused.value
        finally:
            engine.dispose()

    error = await asyncio.to_thread(append_without_begin)
    assert error.code == "X_INVARIANT"
    assert "outside a transaction on a SQLAlchemy Session" in error.message
    assert "session.begin()" in error.fix
    assert await db.fetchval(f'SELECT count(*) FROM "{driver.schema}".outbox') == 0


async def test_blocking_connections_are_refused_on_the_event_loop(
    driver: PostgresJobDriver, harness: Any, postgres_dsn: str
) -> None:
    with psycopg.connect(postgres_dsn) as blocking:
        with pytest.raises(FerryError) as awaited:
            await send_receipt.enqueue({"order_id": 1}, connection=blocking)
        assert awaited.value.code == "X_SYNC_ON_EVENT_LOOP"
        assert "a psycopg Connection" in awaited.value.message
        with pytest.raises(FerryError) as on_loop:
            send_receipt.enqueue_sync({"order_id": 1}, connection=blocking)
    assert on_loop.value.code == "X_SYNC_ON_EVENT_LOOP"
    assert 'enqueue_sync of job "refusals.receipt"' in on_loop.value.message


async def test_enqueue_sync_without_a_connection_runs_on_the_loop_the_driver_serves(
    driver: PostgresJobDriver, harness: Any
) -> None:
    """Sync code on a thread of a running loop (an ASGI app's sync endpoint) reaches the
    driver's pool through that loop."""
    loop_thread = threading.current_thread()

    def from_a_thread() -> Any:
        assert threading.current_thread() is not loop_thread
        return send_receipt.enqueue_sync({"order_id": 7})

    result = await asyncio.to_thread(from_a_thread)
    run = await driver.introspect.get_run(result.job_id)
    assert run is not None and run.summary.name == "refusals.receipt"
