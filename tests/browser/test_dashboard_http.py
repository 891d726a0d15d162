"""The dashboard over HTTP (in-process ASGI, real Postgres): access, CSRF, pages, actions."""

from __future__ import annotations

import json
import re
from types import ModuleType

import asyncpg
import httpx
import pytest

from ferry import FerryError
from ferry._admin import Access, admin_app
from ferry.drivers import PostgresJobDriver
from ferry.drivers._postgres.queries import Queries
from ferry.drivers.protocol import RunFilter

from .conftest import MANAGE_TOKEN, READ_TOKEN

READ = {"Authorization": f"Bearer {READ_TOKEN}"}
MANAGE = {"Authorization": f"Bearer {MANAGE_TOKEN}"}


async def _run_id(driver: PostgresJobDriver, state: str) -> str:
    [run] = await driver.introspect.list_runs(RunFilter(state=state))  # type: ignore[arg-type]
    return run.id


async def _login(client: httpx.AsyncClient, token: str) -> str:
    """Sign in through the form; answers the CSRF token the next page carries."""
    signed_in = await client.post("/admin/login", data={"token": token})
    assert signed_in.status_code == 303
    page = await client.get("/admin/jobs")
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None, "a manage session's page carries its CSRF token"
    return found.group(1)


async def test_nothing_is_served_without_a_token(
    client: httpx.AsyncClient, seeded: PostgresJobDriver
) -> None:
    dead = await _run_id(seeded, "dead")
    for path in ("/admin/jobs", f"/admin/jobs/runs/{dead}", "/admin/jobs/tasks"):
        page = await client.get(path)
        assert (page.status_code, page.headers["location"]) == (303, "/admin/login")
    refused = await client.post(f"/admin/jobs/runs/{dead}/retry")
    assert refused.status_code == 401
    wrong = await client.get("/admin/jobs", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 303
    assert (await client.post("/admin/login", data={"token": "nope"})).status_code == 401


def test_a_dashboard_without_any_token_refuses_to_start() -> None:
    with pytest.raises(FerryError) as refused:
        Access()
    assert refused.value.code == "X_INVARIANT"


async def test_a_read_token_sees_every_page_but_cannot_act(
    client: httpx.AsyncClient, seeded: PostgresJobDriver
) -> None:
    dead = await _run_id(seeded, "dead")
    jobs = await client.get("/admin/jobs", headers=READ)
    assert jobs.status_code == 200 and "later" in jobs.text
    assert "Retry" not in (await client.get(f"/admin/jobs/runs/{dead}", headers=READ)).text
    refused = await client.post(f"/admin/jobs/runs/{dead}/retry", headers=READ)
    assert refused.status_code == 403 and "job:manage" in refused.text
    assert jobs.headers["content-security-policy"].startswith("default-src 'none'")


async def test_a_session_posts_only_with_its_own_csrf_token(
    client: httpx.AsyncClient, seeded: PostgresJobDriver
) -> None:
    dead = await _run_id(seeded, "dead")
    csrf = await _login(client, MANAGE_TOKEN)
    assert (await client.post(f"/admin/jobs/runs/{dead}/retry")).status_code == 403
    forged = await client.post(f"/admin/jobs/runs/{dead}/retry", data={"csrf": "0" * 64})
    assert forged.status_code == 403
    done = await client.post(f"/admin/jobs/runs/{dead}/retry", data={"csrf": csrf})
    assert done.status_code == 303 and "notice=" in done.headers["location"]
    run = await seeded.introspect.get_run(dead)
    assert run is not None and run.summary.state == "queued"


async def test_an_action_the_run_state_refuses_comes_back_as_an_error_on_the_page(
    client: httpx.AsyncClient, seeded: PostgresJobDriver
) -> None:
    completed = await _run_id(seeded, "completed")
    answer = await client.post(f"/admin/jobs/runs/{completed}/retry", headers=MANAGE)
    page = await client.get(answer.headers["location"], headers=MANAGE)
    assert "X_RUN_STATE" in page.text


async def test_the_runs_list_filters_in_sql_and_refuses_a_bad_filter_on_the_page(
    client: httpx.AsyncClient, seeded: PostgresJobDriver
) -> None:
    dead = await _run_id(seeded, "dead")
    page = await client.get("/admin/jobs?state=dead", headers=READ)
    assert f"/admin/jobs/runs/{dead}" in page.text
    assert page.text.count('href="/admin/jobs/runs/') == 1
    bad = await client.get("/admin/jobs?state=finished", headers=READ)
    assert bad.status_code == 400 and "X_INVARIANT" in bad.text


async def test_a_run_page_shows_input_steps_error_and_lease(
    client: httpx.AsyncClient, seeded: PostgresJobDriver
) -> None:
    dead = await _run_id(seeded, "dead")
    page = await client.get(f"/admin/jobs/runs/{dead}", headers=READ)
    for shown in (
        "compose",
        "deliver",
        "X_JOB_FAILED",
        "cannot greet bob",
        "lease holder",
        "2 / 2",
    ):
        assert shown in page.text
    assert (await client.get("/admin/jobs/runs/999999", headers=READ)).status_code == 404


async def test_a_run_page_shows_its_result_its_parent_and_its_children(
    client: httpx.AsyncClient, seeded: PostgresJobDriver, cli_app: ModuleType
) -> None:
    parent = await cli_app.seed_roll_call(seeded, seeded.clock)
    page = (await client.get(f"/admin/jobs/runs/{parent}", headers=READ)).text
    assert '<pre id="result">[\n  &#34;completed&#34;,\n  &#34;completed&#34;\n]</pre>' in page
    assert "2 (0 not ended)" in page and page.count("cli.greet</td>") == 2
    [child] = re.findall(r'<td><a href="/admin/jobs/runs/(\d+)">', page)[:1]
    child_page = (await client.get(f"/admin/jobs/runs/{child}", headers=READ)).text
    assert f'<a href="/admin/jobs/runs/{parent}">run {parent}</a>' in child_page


async def test_a_large_result_is_a_bounded_preview_and_a_download(
    client: httpx.AsyncClient, seeded: PostgresJobDriver, cli_app: ModuleType, postgres_dsn: str
) -> None:
    parent = await cli_app.seed_roll_call(seeded, seeded.clock)
    # A result far over the page's bound (one a driver with a high max_payload_bytes keeps).
    connection = await asyncpg.connect(postgres_dsn)
    try:
        await connection.execute(
            f'UPDATE "{seeded.schema}".jobs SET result = $1::jsonb WHERE id = $2',
            json.dumps(["x" * 100] * 1_000),
            int(parent),
        )
    finally:
        await connection.close()
    page = (await client.get(f"/admin/jobs/runs/{parent}", headers=READ)).text
    assert 'id="result-truncated"' in page and "Download the full result" in page
    whole = await client.get(f"/admin/jobs/runs/{parent}/result.json", headers=READ)
    assert json.loads(whole.content) == ["x" * 100] * 1_000


async def test_task_run_now_enqueues_and_pause_resume_land_in_the_scheduler_store(
    client: httpx.AsyncClient, seeded: PostgresJobDriver
) -> None:
    page = await client.get("/admin/jobs/tasks", headers=READ)
    assert "cli.nightly" in page.text and "Europe/Berlin" in page.text
    fired = await client.post(
        "/admin/jobs/tasks/run-now", data={"name": "cli.nightly"}, headers=MANAGE
    )
    assert fired.headers["location"].endswith("?notice=task-fired")
    names = [r.name for r in await seeded.introspect.list_runs(RunFilter(state="queued"))]
    assert len(names) == 2, "the task's entry was enqueued beside the seeded queued run"
    await client.post("/admin/jobs/tasks/pause", data={"name": "cli.nightly"}, headers=MANAGE)
    assert "paused" in (await client.get("/admin/jobs/tasks", headers=READ)).text
    unknown = await client.post("/admin/jobs/tasks/pause", data={"name": "nope"}, headers=MANAGE)
    assert "X_TASK_UNKNOWN" in unknown.headers["location"]


async def test_insecure_dev_serves_without_a_token_but_still_demands_csrf(
    seeded: PostgresJobDriver,
) -> None:
    app = admin_app(seeded, access=Access(insecure_dev=True))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://dashboard") as http:
        page = await http.get("/admin/jobs")
        assert page.status_code == 200
        dead = await _run_id(seeded, "dead")
        assert (await http.post(f"/admin/jobs/runs/{dead}/retry")).status_code == 403
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert csrf is not None
        done = await http.post(f"/admin/jobs/runs/{dead}/retry", data={"csrf": csrf.group(1)})
        assert done.status_code == 303


async def test_the_runs_page_reads_one_index_page_with_100k_runs_in_the_table(
    client: httpx.AsyncClient, seeded: PostgresJobDriver, postgres_dsn: str, pg_schema: str
) -> None:
    connection = await asyncpg.connect(postgres_dsn)
    try:
        await connection.execute(
            f"""INSERT INTO "{pg_schema}".jobs (name, queue, payload, idempotency_key, state,
                    max_attempts, run_at_ms, created_at_ms, updated_at_ms, finished_at_ms)
                SELECT 'cli.greet', 'bulk', '{{}}'::jsonb, 'bulk:' || n, 'completed', 1,
                       n, n, n, n
                FROM generate_series(1, 100000) AS n"""
        )
        await connection.execute(f'ANALYZE "{pg_schema}".jobs')
        queries = Queries(pg_schema)  # the driver's own statement, as the page runs it
        plan = "\n".join(
            row[0]
            for row in await connection.fetch(
                "EXPLAIN " + queries["runs_list"],
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                50,
                False,
                0,
                *[None] * 8,  # the search words
            )
        )
    finally:
        await connection.close()
    assert "Index Scan Backward" in plan and "Sort" not in plan, plan
    page = await client.get("/admin/jobs", headers=READ)
    assert page.status_code == 200
    assert page.text.count('href="/admin/jobs/runs/') == 50
    assert 'id="older"' in page.text
    older = await client.get("/admin/jobs?queue=bulk&before=50001", headers=READ)
    assert "/admin/jobs/runs/50000" in older.text
