"""Property: any request to any dashboard route — random query words, path segments and
form fields, through an HTTP client against the real app on real Postgres — is answered
below 500: a page, a redirect, or a 4xx naming what was refused. Never a traceback (the
transport re-raises any exception the app lets out). A refused action changed nothing.

Budget: 200 random requests, a bearer token with job:manage (so every route is reached).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support.fuzz import normal_run_state, words

from ferry._admin import Access, admin_app
from ferry._jobs.facade import set_job_driver
from ferry._operations.filters import FILTER_WORDS
from ferry._scheduler.store import SchedulerStore
from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import RunFilter

from .conftest import MANAGE_TOKEN, READ_TOKEN

MANAGE = {"Authorization": f"Bearer {MANAGE_TOKEN}"}
ids = st.sampled_from(["1", "2", "3"]) | words
segment = ids.map(lambda text: quote(text.encode("utf-8", "surrogateescape"), safe=""))
query = st.dictionaries(
    st.sampled_from([*FILTER_WORDS, "refresh", "notice", "error"]) | words, words, max_size=4
)
form = st.dictionaries(st.sampled_from(["queue", "name", "run", "csrf"]) | words, words, max_size=3)
bulk_words = st.dictionaries(
    st.sampled_from([*FILTER_WORDS, "action", "selection", "csrf"]) | words, words, max_size=4
)
requests = st.one_of(
    st.tuples(
        st.just("GET"),
        st.sampled_from(
            ["/admin/jobs", "/admin/jobs/dead", "/admin/jobs/tasks", "/admin/jobs/workers"]
        ),
        query,
        st.just({}),
    ),
    st.tuples(st.just("GET"), segment.map(lambda s: f"/admin/jobs/runs/{s}"), query, st.just({})),
    st.tuples(
        st.just("GET"),
        segment.map(lambda s: f"/admin/jobs/runs/{s}/input.json"),
        st.just({}),
        st.just({}),
    ),
    st.tuples(
        st.just("POST"),
        st.tuples(segment, st.sampled_from(["retry", "cancel"]) | segment).map(
            lambda parts: f"/admin/jobs/runs/{parts[0]}/{parts[1]}"
        ),
        st.just({}),
        form,
    ),
    st.tuples(
        st.just("POST"),
        (st.sampled_from(["pause", "resume"]) | segment).map(lambda a: f"/admin/jobs/queues/{a}"),
        st.just({}),
        form,
    ),
    st.tuples(
        st.just("POST"),
        (st.sampled_from(["pause", "resume", "run-now"]) | segment).map(
            lambda a: f"/admin/jobs/tasks/{a}"
        ),
        st.just({}),
        form,
    ),
    st.tuples(st.just("POST"), st.just("/admin/jobs/dead/retry"), st.just({}), form),
    st.tuples(st.just("GET"), st.just("/admin/jobs/bulk"), bulk_words, st.just({})),
    st.tuples(
        st.just("POST"),
        (st.sampled_from(["retry", "cancel", "delete"]) | segment).map(
            lambda a: f"/admin/jobs/bulk/{a}"
        ),
        st.just({}),
        bulk_words,
    ),
    st.tuples(st.just("POST"), st.just("/admin/login"), st.just({}), form),
)
SIGN_IN_ADDRESS = ("198.51.100.1", 5000)
"""Sign-in guesses come from an address of their own: five wrong tokens throttle their
address (429), which must not hold back the bearer requests of every other example."""


def _encodable(value: Any) -> Any:
    """Form and query text as a browser sends it: UTF-8 (a lone surrogate as its bytes)."""
    return {
        k.encode("utf-8", "surrogateescape"): v.encode("utf-8", "surrogateescape")
        for k, v in value.items()
    }


@pytest.fixture
async def clients(seeded: PostgresJobDriver, cli_app: ModuleType) -> Any:
    """The app's clients: one for bearer requests, one (another address) for sign-ins."""
    access = Access(read_tokens=[READ_TOKEN], manage_tokens=[MANAGE_TOKEN])
    app = admin_app(seeded, access=access, tasks=[cli_app.nightly])
    previous = set_job_driver(seeded)
    # ASGITransport re-raises any exception the app lets out: a traceback fails the test.
    async with (
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://d") as bearer,
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app, client=SIGN_IN_ADDRESS), base_url="http://d"
        ) as sign_in,
    ):
        yield bearer, sign_in
    set_job_driver(previous)


async def _state(driver: PostgresJobDriver) -> Any:
    runs = await driver.introspect.list_runs(RunFilter(limit=500))
    queues = await driver.stats()
    return (
        runs,
        [(q.queue, q.paused) for q in queues],
        sorted(await SchedulerStore(driver).paused_tasks()),
    )


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(request=requests)
async def test_any_request_is_answered_below_500_and_a_refused_action_changes_nothing(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient], seeded: PostgresJobDriver, request: Any
) -> None:
    method, path, params, fields = request
    before = await _state(seeded)
    client = clients[1] if path == "/admin/login" else clients[0]
    response = await client.request(
        method,
        path,
        params=httpx.QueryParams(_encodable(params)) if params else None,
        data=_encodable(fields) if method == "POST" else None,
        headers=MANAGE if client is clients[0] else None,
    )
    event(f"{method} {response.status_code}")
    assert response.status_code < 500, (method, path, params, fields, response.text[:500])
    refused = response.status_code >= 400 or "error=" in response.headers.get("location", "")
    if refused and not path.endswith("/dead/retry"):
        assert await _state(seeded) == before, f"refused {method} {path} but acted"


async def test_after_the_fuzz_a_worker_completes_a_normal_run(
    seeded: PostgresJobDriver, cli_app: ModuleType
) -> None:
    state = await normal_run_state(seeded, cli_app.greet, {"name": "after-the-dashboard-fuzz"})
    assert state == "completed"
