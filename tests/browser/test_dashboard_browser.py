"""The dashboard in a real headless Chromium (Playwright driving Debian's ``chromium``).

An operator signs in, finds the dead run, retries it, and fires a task by hand — clicking
what a person clicks and reading what a person reads. With ``FERRY_DOCS_SCREENSHOTS=1``
each page's screenshot is written to ``docs/img/`` (what ``docs/dashboard.md`` shows).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright, expect

from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import RunFilter

from .conftest import MANAGE_TOKEN, READ_TOKEN, REPO

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


async def _sign_in(page: Page, base: str, token: str) -> None:
    await page.goto(f"{base}/admin/jobs")
    await expect(page.get_by_role("heading", name="Sign in to the jobs dashboard")).to_be_visible()
    await page.get_by_label("Access token").fill(token)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", name="Jobs", exact=True)).to_be_visible()


async def test_an_operator_retries_a_dead_run_and_fires_a_task_now(
    browser: Browser, served: str, seeded_driver: PostgresJobDriver, shots: Path
) -> None:
    page = await browser.new_page(viewport={"width": 1280, "height": 800})
    await _sign_in(page, served, MANAGE_TOKEN)
    queues = page.locator("#queues")
    await expect(queues).to_contain_text("later")
    await page.screenshot(path=str(shots / "dashboard-jobs.png"), full_page=True)

    await page.get_by_label("state").select_option("dead")
    await page.get_by_role("button", name="Filter").click()
    runs = page.locator("#runs tbody tr")
    await expect(runs).to_have_count(1)
    await expect(runs.first).to_contain_text("X_JOB_FAILED")
    await runs.first.get_by_role("link").click()

    await expect(page.locator("#run-state")).to_have_text("dead")
    await expect(page.locator("#last-error")).to_contain_text("cannot greet bob")
    await expect(page.locator("#steps")).to_contain_text("compose")
    await page.screenshot(path=str(shots / "dashboard-run.png"), full_page=True)
    await page.get_by_role("button", name="Retry").click()
    await expect(page.get_by_role("status")).to_contain_text("is queued again")
    await expect(page.locator("#run-state")).to_have_text("queued")

    await page.get_by_role("link", name="Tasks").click()
    await expect(page.locator("#tasks")).to_contain_text("Europe/Berlin")
    await page.screenshot(path=str(shots / "dashboard-tasks.png"), full_page=True)
    await page.get_by_role("button", name="Run now").click()
    await expect(page.get_by_role("status")).to_contain_text("The task fired its entries now")

    queued = await seeded_driver.introspect.list_runs(RunFilter(state="queued"))
    assert len(queued) == 3, "the retried run, the seeded queued run and the task's run"


async def test_a_read_only_session_sees_the_pages_without_any_action(
    browser: Browser, served: str, seeded_driver: PostgresJobDriver
) -> None:
    page = await browser.new_page()
    await _sign_in(page, served, READ_TOKEN)
    await expect(page.locator("#queues")).to_contain_text("default")
    await expect(page.get_by_role("button", name="Pause")).to_have_count(0)
    await page.get_by_role("link", name="Tasks").click()
    await expect(page.locator("#tasks")).to_contain_text("cli.nightly")
    await expect(page.get_by_role("button", name="Run now")).to_have_count(0)
