"""The dashboard in a real headless Chromium (Playwright driving Debian's ``chromium``).

An operator signs in, finds the dead run, retries it, and fires a task by hand — clicking
what a person clicks and reading what a person reads. With ``FERRY_DOCS_SCREENSHOTS=1``
each page's screenshot is written to ``docs/img/`` (what ``docs/dashboard.md`` shows).
"""

from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType
from typing import Any

from playwright.async_api import Browser, expect

from ferry import JobHandle
from ferry._clock import FrozenClock
from ferry.drivers import PostgresJobDriver, postgres_job_driver
from ferry.drivers.protocol import RunFilter
from ferry.testing import Harness

from .conftest import MANAGE_TOKEN, READ_TOKEN, sign_in


async def test_an_operator_retries_a_dead_run_and_fires_a_task_now(
    browser: Browser, served: str, seeded: PostgresJobDriver, shots: Path
) -> None:
    page = await browser.new_page(viewport={"width": 1280, "height": 800})
    await sign_in(page, served, MANAGE_TOKEN)
    queues = page.locator("#queues")
    await expect(queues).to_contain_text("later")

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

    queued = await seeded.introspect.list_runs(RunFilter(state="queued"))
    assert len(queued) == 3, "the retried run, the seeded queued run and the task's run"


async def test_a_read_only_session_sees_the_pages_without_any_action(
    browser: Browser, served: str, seeded: PostgresJobDriver
) -> None:
    page = await browser.new_page()
    await sign_in(page, served, READ_TOKEN)
    await expect(page.locator("#queues")).to_contain_text("default")
    await expect(page.get_by_role("button", name="Pause", exact=True)).to_have_count(0)
    await page.get_by_role("link", name="Tasks").click()
    await expect(page.locator("#tasks")).to_contain_text("cli.nightly")
    await expect(page.get_by_role("button", name="Run now")).to_have_count(0)


async def _seed_the_last_hour(dsn: str, schema: str, greet: JobHandle[Any, Any]) -> None:
    """Runs of ``greet`` that ended over the last 45 minutes of real time on three queues,
    some dead, so the served dashboard (on the system clock) has an hour to draw."""
    clock = FrozenClock(start_ms=int(time.time() * 1000) - 45 * 60_000)
    driver = postgres_job_driver(dsn, schema=schema, clock=clock)
    harness = Harness(driver=driver, clock=clock, tasks=[])
    try:
        with harness.installed():
            for minute in range(0, 42, 3):
                for n in range(minute % 7 + 2):
                    queue = ("default", "mail", "reports")[n % 3]
                    fail = (minute + n) % 11 == 0
                    name = f"m{minute}-{n}"
                    await greet.enqueue({"name": name, "fail": fail}, queue=queue)
                await harness.drain()
                clock.advance("3m")
    finally:
        await driver.close()


async def test_an_operator_reads_the_hour_chart_pauses_refresh_and_retries_dead_letters(
    browser: Browser,
    served: str,
    seeded: PostgresJobDriver,
    cli_app: ModuleType,
    postgres_dsn: str,
    pg_schema: str,
    shots: Path,
) -> None:
    await _seed_the_last_hour(postgres_dsn, pg_schema, cli_app.greet)
    page = await browser.new_page(viewport={"width": 1280, "height": 900})
    await sign_in(page, served, MANAGE_TOKEN)

    mail = page.locator('#throughput figure[data-queue="mail"]')
    await expect(mail).to_be_visible()
    await expect(mail.locator("g.bucket").first).to_be_attached()
    completed = int(await mail.get_attribute("data-completed") or "0")
    assert completed > 0
    await expect(mail.locator("figcaption")).to_contain_text(f"{completed} completed")
    first_bar = await mail.locator("g.bucket title").first.text_content()
    assert first_bar is not None and "completed" in first_bar and "dead" in first_bar
    await expect(page.locator("#latency circle.run").first).to_be_attached()
    await expect(page.locator("#latency figcaption")).to_contain_text("median")

    toggle = page.locator("#refresh-toggle")
    await expect(toggle).to_have_text("Pause auto-refresh")
    await toggle.click()
    await expect(toggle).to_have_text("Resume auto-refresh")
    assert page.url.endswith("/admin/jobs"), "the script paused it in place, no navigation"
    await page.reload()
    await expect(page.locator("#refresh-toggle")).to_have_text("Resume auto-refresh")
    await page.screenshot(path=str(shots / "dashboard-jobs.png"), full_page=True)

    await page.get_by_role("link", name="Dead letters").click()
    rows = page.locator("#dead tbody tr")
    dead = await seeded.introspect.list_runs(RunFilter(state="dead", limit=500))
    await expect(rows).to_have_count(len(dead))
    assert len(dead) >= 3
    for row in range(2):
        await rows.nth(row).get_by_role("checkbox").check()
    await page.screenshot(path=str(shots / "dashboard-dead.png"), full_page=True)
    await page.get_by_role("button", name="Retry selected").click()
    await expect(page.get_by_role("status")).to_have_text("The selected runs are queued again.")
    await expect(page.locator("#dead tbody tr")).to_have_count(len(dead) - 2)
    retried = [await seeded.introspect.get_run(run.id) for run in dead[:2]]
    assert [r.summary.state for r in retried if r is not None] == ["queued", "queued"]
