"""``ferry relay`` as a real process, with the outbox and the queue on different databases."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from role_process import free_port

from ferry.drivers import postgres_job_driver

INTEGRATION_DIR = Path(__file__).resolve().parents[1]
REPO = Path(__file__).resolve().parents[3]
CLI = "import sys; from ferry._cli import main; sys.exit(main())"


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
    postgres_dsn: str, queue_dsn: str, pg_schema: str, tmp_path: Path
) -> None:
    app = postgres_job_driver(postgres_dsn, schema=pg_schema)
    outbox = app.outbox
    app_db = await asyncpg.connect(postgres_dsn)
    log_path = tmp_path / "relay.log"
    env = {
        **os.environ,
        "DATABASE_URL": queue_dsn,
        "OUTBOX_DATABASE_URL": postgres_dsn,
        "FERRY_SCHEMA": pg_schema,
        "PYTHONPATH": os.pathsep.join([str(INTEGRATION_DIR), str(REPO / "runtime")]),
        "METRICS_PORT": str(free_port()),
    }
    with log_path.open("wb") as log:
        relay = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CLI, "relay", "--app", "outbox.relay_app",
            env=env, cwd=REPO, stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log,
        )  # fmt: skip
    try:
        async with app_db.transaction():
            await outbox.append("send_receipt", {"order_id": "o-1"}, connection=app_db)
        async with asyncio.timeout(30):  # a guard, not a timing
            while not (jobs := await queued_jobs(queue_dsn, pg_schema)) or await outbox.pending():
                assert relay.returncode is None, log_path.read_text()
                await asyncio.sleep(0.05)
        assert [(j["name"], j["payload"]) for j in jobs] == [
            ("send_receipt", '{"order_id": "o-1"}')
        ]

        relay.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(relay.wait(), 30) == 0, log_path.read_text()
    finally:
        if relay.returncode is None:
            relay.kill()
            await relay.wait()
        await app_db.close()
        await app.close()
