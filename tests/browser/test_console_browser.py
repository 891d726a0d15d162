"""The console's screens in a real headless Chromium: the Workers page follows the fleet,
the Scheduled and Retrying tabs list the right runs, a failure's traceback is shown as
text (never markup), and a bulk retry by filter retries exactly the previewed runs. With
``FERRY_DOCS_SCREENSHOTS=1`` each screen's screenshot is written to ``docs/img/``."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

from playwright.async_api import Browser, expect
from support.processes import Fleet, ferry_env

from ferry.drivers import PostgresJobDriver
from ferry.drivers.failures import failure_record
from ferry.drivers.protocol import (
    ClaimOptions,
    EnqueueRequest,
    JobError,
    NackOptions,
    Progress,
    RunFilter,
    StepRecord,
)

from .conftest import MANAGE_TOKEN, sign_in

HOUR_MS = 3_600_000


def _now_ms() -> int:
    """The wall clock: what the served dashboard (on the system clock) compares with."""
    return time.time_ns() // 1_000_000


async def _enqueue(driver: PostgresJobDriver, key: str, queue: str, **more: object) -> str:
    request = EnqueueRequest(
        name="cli.greet", queue=queue, payload={"name": key}, idempotency_key=key,
        max_attempts=3, **more,  # type: ignore[arg-type]
    )  # fmt: skip
    return (await driver.enqueue(request)).job_id


async def _fail(
    driver: PostgresJobDriver,
    queue: str,
    outcome: str,
    *,
    run_at_ms: int,
    traceback: str,
    steps: tuple[StepRecord, ...] = (),
) -> None:
    """Settle the next run of ``queue`` as a failed attempt (after ``steps``): retried
    later, or dead."""
    [claimed] = await driver.claim(ClaimOptions("browser-test", 60_000, 1, queues=[queue]))
    for step in steps:
        assert await driver.steps.record(claimed.id, step, worker_id="browser-test")
    failure = failure_record(
        attempt=claimed.attempt, code="X_JOB_FAILED", at_ms=_now_ms(), traceback=traceback
    )
    nack = NackOptions(
        "browser-test",
        outcome,  # type: ignore[arg-type]
        run_at_ms=run_at_ms,
        error=JobError("X_JOB_FAILED", f'job "cli.greet" raised RuntimeError: {queue}'),
        failure=failure,
        progress=Progress(3, 4),
    )
    assert await driver.nack(claimed.id, nack)


async def test_the_workers_page_shows_a_live_worker_and_drops_a_stopped_one(
    browser: Browser,
    served: str,
    fleet: Fleet,
    postgres_dsn: str,
    pg_schema: str,
    shots: Path,
) -> None:
    page = await browser.new_page(
        viewport={"width": 1280, "height": 600}, timezone_id="Europe/Berlin"
    )
    await sign_in(page, served, MANAGE_TOKEN)
    worker = await fleet.start(
        *("worker", "--app", "cli_app", "--lease-seconds", "3", "--concurrency", "4"),
        name="worker",
        env=ferry_env(postgres_dsn, pg_schema),
    )
    rows = page.locator("#workers tbody tr[data-worker]")
    try:
        for _ in range(60):
            await page.goto(f"{served}/admin/jobs/workers")
            if await rows.count() == 1:
                break
            await page.wait_for_timeout(500)
        await expect(rows).to_have_count(1)
        row = rows.first
        assert f":{worker.pid}:" in (await row.get_attribute("data-worker") or "")
        await expect(row).to_contain_text(str(worker.pid))
        await expect(row.locator("td").nth(5)).to_have_text("4")  # concurrency
        # Instants in the browser's own zone, UTC on hover.
        started = row.locator("time").first
        await expect(started).to_have_attribute("data-zone", "Europe/Berlin")
        await expect(started).to_have_attribute("title", re.compile(r"Z UTC$"))
        assert "UTC" not in await started.inner_text()
        await page.screenshot(path=str(shots / "dashboard-workers.png"), full_page=True)
    finally:
        worker.send(signal.SIGTERM)
        await worker.wait()
    await page.goto(f"{served}/admin/jobs/workers")
    await expect(rows).to_have_count(0)
    await expect(page.locator("#workers")).to_contain_text("No worker is running.")


async def test_the_scheduled_and_retrying_tabs_list_the_right_runs(
    browser: Browser, served: str, seeded: PostgresJobDriver, shots: Path
) -> None:
    now = _now_ms()
    scheduled = await _enqueue(seeded, "later-on", "tabs", run_at_ms=now + HOUR_MS)
    await _enqueue(seeded, "retrying", "flaky")
    await _fail(seeded, "flaky", "retry", run_at_ms=now + 10 * 60_000, traceback="boom")
    [retrying] = await seeded.introspect.list_runs(RunFilter(queue="flaky"))
    page = await browser.new_page(viewport={"width": 1280, "height": 900})
    await sign_in(page, served, MANAGE_TOKEN)

    async def listed(view: str) -> list[str]:
        await page.locator(f'#views a[data-view="{view}"]').click()
        await expect(page.locator(f'#views a[data-view="{view}"]')).to_have_class("here")
        return [r or "" for r in await page.locator("#runs tbody tr").evaluate_all(
            "rows => rows.map(r => r.getAttribute('data-run'))"
        )]  # fmt: skip

    assert await listed("scheduled") == [scheduled]
    assert await listed("retrying") == [retrying.id]
    run_at = page.locator(f'#runs tr[data-run="{retrying.id}"] td.run-at time')
    await expect(run_at).to_have_attribute("title", re.compile(r" UTC$"))  # UTC on hover
    await page.locator("#runs").scroll_into_view_if_needed()
    await page.screenshot(path=str(shots / "dashboard-retrying.png"), full_page=False)
    assert await listed("dead") == [(await _dead_ids(seeded))[0]]


async def _dead_ids(driver: PostgresJobDriver) -> list[str]:
    return [r.id for r in await driver.introspect.list_runs(RunFilter(state="dead"))]


async def test_a_failures_traceback_is_shown_as_text_never_as_markup(
    browser: Browser, served: str, seeded: PostgresJobDriver, shots: Path
) -> None:
    hostile = (
        'Traceback (most recent call last):\n  File "app.py", line 7, in greet\n'
        "RuntimeError: <script>window.pwned = 1</script><b>bold</b> \x1b[31mred"
    )
    job_id = await _enqueue(seeded, "hostile", "hostile")
    began = _now_ms() - 10_000
    steps = tuple(
        StepRecord(name, "run", {"n": n}, began + n * 2_000, began + n * 2_000 + took)
        for n, (name, took) in enumerate((("compose", 40), ("deliver", 1_250), ("receipt", 5)))
    )
    await _fail(seeded, "hostile", "dead", run_at_ms=_now_ms(), traceback=hostile, steps=steps)
    page = await browser.new_page(viewport={"width": 1280, "height": 1000})
    await sign_in(page, served, MANAGE_TOKEN)
    await page.goto(f"{served}/admin/jobs/runs/{job_id}")
    shown = page.locator("#failures pre.traceback")
    await expect(shown).to_have_count(1)
    await expect(shown).to_contain_text("<script>window.pwned = 1</script><b>bold</b> \\x1b[31mred")
    assert await page.evaluate("() => window.pwned") is None
    assert await page.locator("#failures b").count() == 0
    await expect(page.locator("#progress .progress")).to_have_attribute("aria-valuenow", "3")
    took = page.locator('#steps tr[data-step="deliver"] .bar .took')
    await expect(took).to_have_text("1.2 s")
    await page.screenshot(path=str(shots / "dashboard-failure.png"), full_page=True)


async def test_a_bulk_retry_by_filter_retries_exactly_the_previewed_runs(
    browser: Browser, served: str, seeded: PostgresJobDriver, shots: Path
) -> None:
    mine = [await _enqueue(seeded, f"bulk-{n}", "bulk") for n in range(2)]
    for _ in mine:
        await _fail(seeded, "bulk", "dead", run_at_ms=_now_ms(), traceback="down")
    others = await _dead_ids(seeded)  # the seeded dead run too
    page = await browser.new_page(viewport={"width": 1280, "height": 800})
    await sign_in(page, served, MANAGE_TOKEN)
    await page.goto(f"{served}/admin/jobs?queue=bulk&view=dead#runs")
    await page.locator('#bulk a[data-action="retry"]').click()
    await expect(page.locator("#bulk-count")).to_contain_text("2 run(s) would be retried")
    await page.screenshot(path=str(shots / "dashboard-bulk.png"), full_page=True)

    # A third dead run arrives before the confirmation: nothing is retried, the new
    # selection is shown.
    late = await _enqueue(seeded, "bulk-late", "bulk")
    await _fail(seeded, "bulk", "dead", run_at_ms=_now_ms(), traceback="down")
    await page.locator("#bulk-confirm button").click()
    await expect(page.get_by_role("alert")).to_contain_text("X_SELECTION_CHANGED")
    await expect(page.locator("#bulk-count")).to_contain_text("3 run(s) would be retried")
    assert {*mine, late} <= set(await _dead_ids(seeded))

    await page.locator("#bulk-confirm button").click()
    await expect(page.locator("#notice")).to_contain_text("queued again")
    for job_id in [*mine, late]:
        run = await seeded.introspect.get_run(job_id)
        assert run is not None and (run.summary.state, run.summary.attempts) == ("queued", 0)
    assert set(await _dead_ids(seeded)) == set(others) - set(mine)  # nothing else retried
