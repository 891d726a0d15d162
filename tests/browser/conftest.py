"""Fixtures for the dashboard tests: a seeded schema, served in-process or as a process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from ferry._admin import Access, admin_app
from ferry._clock import FrozenClock
from ferry._jobs.facade import set_job_driver
from ferry.drivers import PostgresJobDriver, postgres_job_driver

HERE = Path(__file__).parent
REPO = HERE.parents[1]
APP_DIR = REPO / "tests" / "integration" / "cli"
READ_TOKEN = "read-token-for-tests"
MANAGE_TOKEN = "manage-token-for-tests"


@pytest.fixture(autouse=True, scope="session")
def _app_on_path() -> Iterator[None]:
    """The CLI tests' app importable as ``cli_app``, the module the served process loads."""
    sys.path.insert(0, str(APP_DIR))
    yield
    sys.path.remove(str(APP_DIR))


@pytest.fixture
async def seeded_driver(postgres_dsn: str, pg_schema: str) -> AsyncIterator[PostgresJobDriver]:
    clock = FrozenClock()
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, clock=clock)
    from cli_app import seed

    await seed(driver, clock)
    yield driver
    await driver.close()


@pytest.fixture
async def client(
    seeded_driver: PostgresJobDriver, postgres_dsn: str, pg_schema: str
) -> AsyncIterator[httpx.AsyncClient]:
    """The dashboard app in this process over the seeded schema, reached through ASGI."""
    from cli_app import nightly

    access = Access(read_tokens=[READ_TOKEN], manage_tokens=[MANAGE_TOKEN])
    app = admin_app(seeded_driver, access=access, tasks=[nightly])
    previous = set_job_driver(seeded_driver)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://dashboard") as http:
        yield http
    set_job_driver(previous)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
async def served(
    seeded_driver: PostgresJobDriver, postgres_dsn: str, pg_schema: str, tmp_path: Path
) -> AsyncIterator[str]:
    """``ferry admin`` as a real process over the seeded schema; yields its base URL."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": postgres_dsn,
        "FERRY_SCHEMA": pg_schema,
        "PYTHONPATH": os.pathsep.join([str(APP_DIR), str(REPO / "runtime")]),
    }
    log_path = tmp_path / "admin.log"
    with log_path.open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "ferry",
            "admin",
            "--app",
            "cli_app",
            "--port",
            str(port),
            "--token-read",
            READ_TOKEN,
            "--token-manage",
            MANAGE_TOKEN,
            env=env,
            cwd=REPO,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):  # a bounded wait for the server to answer (a guard, not a timing)
            if process.returncode is not None:
                raise AssertionError(f"ferry admin exited early:\n{log_path.read_text()}")
            with contextlib.suppress(httpx.HTTPError):
                async with httpx.AsyncClient() as http:
                    if (await http.get(f"{base}/admin/login")).status_code == 200:
                        break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"ferry admin never answered:\n{log_path.read_text()}")
        yield base
    finally:
        process.terminate()
        await process.wait()
