"""The jobs page's charts, the dead letters and the auto-refresh (in-process ASGI, real
Postgres). The charts must say what the introspection says: every bar and every point is
read back from the page and compared with ``outcome_series`` and ``recent_latencies``."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import httpx

from ferry._admin.app import SHOWN_INPUT_CHARS
from ferry._admin.charts import BUCKET_MS, CHART_WINDOW_MS, RECENT_RUNS
from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import EnqueueRequest, RunFilter

from .conftest import MANAGE_TOKEN
from .test_dashboard_http import READ, _login


class _Marks(HTMLParser):
    """Every element of the page that carries chart data (``data-*`` attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: dict[str, dict[str, str]] = {}
        self.buckets: list[tuple[str, dict[str, str]]] = []
        self.points: list[dict[str, str]] = []
        self._queue = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "figure" and "data-queue" in a:
            self._queue = a["data-queue"]
            self.figures[self._queue] = a
        elif tag == "g" and a.get("class") == "bucket":
            self.buckets.append((self._queue, a))
        elif tag == "circle" and a.get("class") == "run":
            self.points.append(a)


async def test_the_charts_say_what_the_introspection_says(
    client: httpx.AsyncClient, seeded: PostgresJobDriver
) -> None:
    page = await client.get("/admin/jobs", headers=READ)
    assert page.status_code == 200
    marks = _Marks()
    marks.feed(page.text)

    now = seeded.clock.now_ms()
    since = now - now % BUCKET_MS - CHART_WINDOW_MS + BUCKET_MS
    series = await seeded.introspect.outcome_series(since, BUCKET_MS)
    assert series, "the seed ended runs within the hour"
    drawn = sorted(
        (queue, int(a["data-start"]), int(a["data-completed"]), int(a["data-dead"]))
        for queue, a in marks.buckets
    )
    assert drawn == sorted((b.queue, b.start_ms, b.completed, b.dead) for b in series)
    stats = {q.queue for q in await seeded.stats()}
    assert set(marks.figures) == stats, "every queue gets a chart, an idle one too"
    for queue, figure in marks.figures.items():
        assert int(figure["data-completed"]) == sum(b.completed for b in series if b.queue == queue)
        assert int(figure["data-dead"]) == sum(b.dead for b in series if b.queue == queue)

    recent = await seeded.introspect.recent_latencies(RECENT_RUNS)
    assert [(p["data-run"], int(p["data-latency-ms"])) for p in marks.points] == [
        (r.id, r.latency_ms) for r in reversed(recent)
    ]
    assert re.search(r"<title>run \d+ \(cli\.greet, default\) dead in", page.text)


async def test_dead_letters_retry_in_bulk_only_with_manage_and_the_session_csrf(
    client: httpx.AsyncClient, seeded: PostgresJobDriver
) -> None:
    [dead] = await seeded.introspect.list_runs(RunFilter(state="dead"))
    listed = await client.get("/admin/jobs/dead", headers=READ)
    assert f"/admin/jobs/runs/{dead.id}" in listed.text
    assert 'type="checkbox"' not in listed.text, "a read token sees no selection"
    refused = await client.post("/admin/jobs/dead/retry", data={"run": dead.id}, headers=READ)
    assert refused.status_code == 403

    csrf = await _login(client, MANAGE_TOKEN)
    assert (await client.post("/admin/jobs/dead/retry", data={"run": dead.id})).status_code == 403
    none = await client.post("/admin/jobs/dead/retry", data={"csrf": csrf})
    assert none.headers["location"].endswith("?notice=dead-none-selected")
    done = await client.post("/admin/jobs/dead/retry", data={"csrf": csrf, "run": [dead.id]})
    assert done.headers["location"].endswith("?notice=dead-retried")
    run = await seeded.introspect.get_run(dead.id)
    assert run is not None and run.summary.state == "queued"
    stale = await client.post(
        "/admin/jobs/dead/retry", data={"csrf": csrf, "run": [dead.id, "999999"]}
    )
    assert stale.headers["location"].endswith("?error=dead-retry-partial")
    after = await client.get(stale.headers["location"])
    assert "some selected runs were not retried" in after.text
    assert "No dead run." in after.text


async def test_the_pages_refresh_themselves_unless_paused_with_or_without_script(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/admin/jobs?queue=default", headers=READ)
    assert '<noscript><meta http-equiv="refresh" content="10"></noscript>' in page.text
    assert 'data-refresh="10"' in page.text
    assert 'id="refresh-toggle" href="?queue=default&amp;refresh=off">Pause' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    paused = await client.get("/admin/jobs?queue=default&refresh=off", headers=READ)
    assert 'http-equiv="refresh"' not in paused.text and "refresh.js" not in paused.text
    assert 'id="refresh-toggle" href="?queue=default">Resume' in paused.text
    script = await client.get("/admin/static/refresh.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert "localStorage" in script.text
    run_page = await client.get("/admin/jobs/tasks", headers=READ)
    assert 'http-equiv="refresh"' not in run_page.text, "only the live pages refresh"


async def test_a_large_input_is_shown_truncated_with_a_download_of_the_whole(
    client: httpx.AsyncClient, seeded: PostgresJobDriver
) -> None:
    payload = {"name": "x" * 2_000_000, "fail": False}
    big = await seeded.enqueue(
        EnqueueRequest(
            name="cli.greet", queue="default", payload=payload, idempotency_key="big",
            max_attempts=1,
        )
    )  # fmt: skip
    page = await client.get(f"/admin/jobs/runs/{big.job_id}", headers=READ)
    assert page.status_code == 200 and 'id="input-truncated"' in page.text
    assert len(page.text) < SHOWN_INPUT_CHARS + 20_000, "the page stays small"
    whole = await client.get(f"/admin/jobs/runs/{big.job_id}/input.json", headers=READ)
    assert whole.json() == payload
    assert whole.headers["content-disposition"].startswith("attachment;")
    small = await client.get(f"/admin/jobs/runs/{(await _first(seeded))}", headers=READ)
    assert 'id="input-truncated"' not in small.text
    assert (await client.get("/admin/jobs/runs/424242/input.json", headers=READ)).status_code == 404


async def _first(driver: PostgresJobDriver) -> str:
    [run] = await driver.introspect.list_runs(RunFilter(state="completed"))
    return run.id
