"""Fixtures for the dashboard tests: ``cli_app``'s seeded schema (the shared ``seeded``),
served in-process or as a ``ferry admin`` process."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import AsyncIterator
from types import ModuleType

import httpx
import pytest
from support.processes import Fleet, ferry_env, free_port
from support.waiting import eventually

from ferry._admin import Access, admin_app
from ferry._jobs.facade import set_job_driver
from ferry.drivers import PostgresJobDriver

READ_TOKEN = "read-token-for-tests"
MANAGE_TOKEN = "manage-token-for-tests"


@pytest.fixture
async def client(
    seeded: PostgresJobDriver, cli_app: ModuleType
) -> AsyncIterator[httpx.AsyncClient]:
    """The dashboard app in this process over the seeded schema, reached through ASGI."""
    access = Access(read_tokens=[READ_TOKEN], manage_tokens=[MANAGE_TOKEN])
    app = admin_app(seeded, access=access, tasks=[cli_app.nightly])
    previous = set_job_driver(seeded)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://dashboard") as http:
        yield http
    set_job_driver(previous)


@pytest.fixture
async def served(
    seeded: PostgresJobDriver, fleet: Fleet, postgres_dsn: str, pg_schema: str
) -> AsyncIterator[str]:
    """``ferry admin`` as a real process over the seeded schema; yields its base URL."""
    port = free_port()
    admin = await fleet.start(
        *("admin", "--app", "cli_app", "--port", str(port)),
        *("--token-read", READ_TOKEN, "--token-manage", MANAGE_TOKEN),
        name="admin",
        env=ferry_env(postgres_dsn, pg_schema),
    )
    base = f"http://127.0.0.1:{port}"

    async def answering() -> bool:
        if not admin.running:
            raise AssertionError(f"ferry admin exited early:\n{admin.log()}")
        with contextlib.suppress(httpx.HTTPError):
            async with httpx.AsyncClient() as http:
                return (await http.get(f"{base}/admin/login")).status_code == 200
        return False

    await eventually(answering, within_s=60, what="ferry admin answering")
    yield base
    admin.send(signal.SIGTERM)
    await admin.wait()
