"""Fixtures for the dashboard tests: ``cli_app``'s seeded schema (the shared ``seeded``),
served in-process or as a ``ferry admin`` process."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest
from playwright.async_api import Browser, Page, async_playwright, expect
from support.processes import REPO, Fleet, ferry_env, free_port
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


CHROMIUM = os.environ.get("FERRY_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """Headless Chromium; skipped only outside CI when it is not installed."""
    if shutil.which(CHROMIUM) is None:
        reason = f"chromium not found at {CHROMIUM}: run make test-assets"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where screenshots go: ``docs/img`` when asked for, else the test's own folder."""
    if os.environ.get("FERRY_DOCS_SCREENSHOTS") == "1":
        return REPO / "docs" / "img"
    return tmp_path


async def sign_in(page: Page, base: str, token: str) -> None:
    await page.goto(f"{base}/admin/jobs")
    await expect(page.get_by_role("heading", name="Sign in to the jobs dashboard")).to_be_visible()
    await page.get_by_label("Access token").fill(token)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", name="Jobs", exact=True)).to_be_visible()
