"""``ferry relay`` as a real process, with the outbox and the queue on different databases."""

from __future__ import annotations

import signal
import uuid
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from support.processes import Fleet, ferry_env
from support.waiting import eventually

from ferry.drivers import postgres_job_driver


def on_database(dsn: str, database: str) -> str:
    """``dsn`` pointed at another database of the same server."""
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path=f"/{database}"))


@pytest.fixture
async def queue_dsn(postgres_dsn: str) -> AsyncIterator[str]:
    """A database of its own for the queue: no transaction can span it and the app's."""
    name = f"ferry_queue_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(postgres_dsn)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield on_database(postgres_dsn, name)
    finally:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()


async def queued_jobs(dsn: str, schema: str) -> list[asyncpg.Record]:
    connection = await asyncpg.connect(dsn)
    try:
        return await connection.fetch(f'SELECT name, payload::text FROM "{schema}".jobs')
    except asyncpg.UndefinedTableError:
        return []
    finally:
        await connection.close()


async def test_the_relay_process_moves_commits_from_the_app_database_to_the_queue_database(
    postgres_dsn: str, queue_dsn: str, pg_schema: str, fleet: Fleet
) -> None:
    app = postgres_job_driver(postgres_dsn, schema=pg_schema)
    outbox = app.outbox
    app_db = await asyncpg.connect(postgres_dsn)
    env = ferry_env(queue_dsn, pg_schema, OUTBOX_DATABASE_URL=postgres_dsn)
    relay = await fleet.start("relay", "--app", "outbox.relay_app", name="relay", env=env)
    try:
        async with app_db.transaction():
            await outbox.append("send_receipt", {"order_id": "o-1"}, connection=app_db)

        async def relayed() -> list[asyncpg.Record]:
            assert relay.running, relay.log()
            jobs = await queued_jobs(queue_dsn, pg_schema)
            return [] if await outbox.pending() else jobs

        jobs = await eventually(relayed, what="the entry relayed to the queue database")
        assert [(j["name"], j["payload"]) for j in jobs] == [
            ("send_receipt", '{"order_id": "o-1"}')
        ]

        relay.send(signal.SIGTERM)
        assert await relay.wait(within_s=30) == 0, relay.log()
    finally:
        await app_db.close()
        await app.close()
