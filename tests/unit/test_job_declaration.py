"""``@job``: what it requires, what it refuses where it is written, and the handle it returns."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from ferry import Concurrency, FerryError, RateLimit, Retry, define_api, job
from ferry._jobs.declaration import JobHandle
from ferry._jobs.facade import build_request
from ferry.drivers.protocol import Dedupe


class Org(BaseModel):
    org_id: str


def declare(**options: Any) -> JobHandle[Any, Any]:
    defaults: dict[str, Any] = {"input": Org, "idempotency_key": lambda i: f"k:{i.org_id}"}

    async def body(input: Org) -> None:
        return None

    return job(**{**defaults, **options})(body)


def test_omitting_the_idempotency_key_is_a_type_error_at_import() -> None:
    with pytest.raises(TypeError, match="idempotency_key"):
        job(input=Org)  # type: ignore[call-arg]


def test_omitting_the_idempotency_key_is_an_error_under_mypy(tmp_path: Path) -> None:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(
        textwrap.dedent(
            """
            from pydantic import BaseModel
            from ferry import job

            class Org(BaseModel):
                org_id: str

            @job(input=Org)
            async def onboard(input: Org) -> None: ...
            """
        )
    )
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(snippet)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 1, checked.stdout
    assert 'Missing named argument "idempotency_key"' in checked.stdout


def test_the_idempotency_key_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        job(Org, lambda i: "k")  # type: ignore[misc]


def test_the_handle_lifts_every_declared_field_and_has_no_run() -> None:
    handle = declare(
        retry=Retry(attempts=5, backoff="fixed", base="2s"),
        timeout="30s",
        queue="mail",
        concurrency=Concurrency(key=lambda i: i.org_id, limit=2, when_busy="fail"),
        name="mail.send",
    )
    assert handle.kind == "job"
    assert (handle.name, handle.queue, handle.timeout_ms) == ("mail.send", "mail", 30_000)
    assert handle.retry.attempts == 5 and handle.retry.delay_ms(3) == 2_000
    assert handle.idempotency_key_for({"org_id": "o1"}) == "k:o1"
    assert not hasattr(handle, "run") and not hasattr(handle, "def_")
    assert not hasattr(handle, "def")
    assert handle.describe() == {
        "kind": "job",
        "name": "mail.send",
        "queue": "mail",
        "retry": {"attempts": 5, "backoff": "fixed", "baseMs": 2_000, "maxMs": 30_000},
        "timeoutMs": 30_000,
        "tenant": False,
        "concurrency": {"limit": 2, "keyed": True, "whenBusy": "fail"},
        "rate": None,
        "dedupe": "retained",
        "steps": [],
    }
    rated = declare(rate=RateLimit(limit=100, per="1m", key=lambda i: i.org_id), name="rated")
    assert rated.rate is not None and rated.rate.per_ms == 60_000
    assert rated.describe()["rate"] == {"limit": 100, "perMs": 60_000, "keyed": True}
    windowed = declare(dedupe="1h30m", name="windowed")
    assert windowed.dedupe == Dedupe(window_ms=5_400_000)
    assert windowed.describe()["dedupe"] == 5_400_000
    assert declare(dedupe="active", name="active").describe()["dedupe"] == "active"


def test_default_retry_is_three_attempts_doubling_from_one_second_capped_at_thirty() -> None:
    retry = declare().retry
    assert retry.attempts == 3
    assert [retry.delay_ms(a) for a in range(1, 8)] == [
        1_000,
        2_000,
        4_000,
        8_000,
        16_000,
        30_000,
        30_000,
    ]


def test_an_unnamed_job_is_anonymous_until_define_api_stamps_its_export_name() -> None:
    handle = declare()
    assert handle.name.startswith("anonymous-job-")
    named = declare(name="kept")
    module = types.ModuleType("app_jobs")
    module.onboard_org = handle  # type: ignore[attr-defined]
    module.renamed_export = named  # type: ignore[attr-defined]
    module.actor_view = handle.as_actor("admin")  # type: ignore[attr-defined]
    api = define_api(jobs=[module])
    assert handle.name == "onboard_org"
    assert named.name == "kept", "an explicit name= wins over the export name"
    assert set(api.jobs) == {"onboard_org", "kept"}


def test_two_jobs_on_one_name_are_refused() -> None:
    module = types.ModuleType("clash")
    module.a = declare(name="same")  # type: ignore[attr-defined]
    module.b = declare(name="same")  # type: ignore[attr-defined]
    with pytest.raises(FerryError) as refused:
        define_api(jobs=[module])
    assert refused.value.code == "X_INVARIANT" and '"same"' in refused.value.message


def test_as_actor_shares_the_declaration() -> None:
    handle = declare(name="acting")
    admin = handle.as_actor("admin")
    assert admin.name == "acting" and admin.actor == "admin" and handle.actor is None


@pytest.mark.parametrize(
    ("options", "code", "named"),
    [
        ({"input": dict}, "X_INVARIANT", "pydantic"),
        ({"idempotency_key": "static"}, "X_IDEMPOTENCY_REQUIRED", "static"),
        ({"queue": ""}, "X_INVARIANT", "queue"),
        ({"name": " padded "}, "X_INVARIANT", "name"),
        ({"name": ""}, "X_INVARIANT", "job name"),
        ({"name": "n" * 201}, "X_INVARIANT", "200 characters"),
        ({"queue": "mail\x00"}, "X_TEXT_NOT_STORABLE", "job queue"),
        ({"name": "job\ud800"}, "X_TEXT_NOT_STORABLE", "job name"),
        ({"timeout": "soon"}, "X_INVARIANT", "soon"),
        ({"timeout": 0}, "X_INVARIANT", "timeout 0"),
    ],
)
def test_bad_declarations_are_refused_where_they_are_written(
    options: dict[str, Any], code: str, named: str
) -> None:
    with pytest.raises(FerryError) as refused:
        declare(**options)
    assert refused.value.code == code
    assert named in refused.value.message
    assert refused.value.fix


@pytest.mark.parametrize(
    ("build", "named"),
    [
        (lambda: Retry(attempts=0), "attempts=0"),
        (lambda: Retry(backoff="linear"), "linear"),  # type: ignore[arg-type]
        (lambda: Retry(base="-1s"), "-1s"),
        (lambda: Concurrency(limit=0), "limit=0"),
        (lambda: Concurrency(when_busy="drop"), "drop"),  # type: ignore[arg-type]
    ],
)
def test_bad_policies_are_refused(build: Any, named: str) -> None:
    with pytest.raises(FerryError) as refused:
        build()
    assert refused.value.code == "X_INVARIANT" and named in refused.value.message


@pytest.mark.parametrize(
    ("build", "named"),
    [
        (lambda: RateLimit(limit=0, per="1m"), "limit=0"),
        (lambda: RateLimit(limit=-5, per="1m"), "limit=-5"),
        (lambda: RateLimit(limit=2.5, per="1m"), "limit=2.5"),  # type: ignore[arg-type]
        (lambda: RateLimit(limit=True, per="1m"), "limit=True"),
        (lambda: RateLimit(limit=100_001, per="1m"), "limit=100001"),
        (lambda: RateLimit(limit=10, per="soon"), "RateLimit.per 'soon'"),
        (lambda: RateLimit(limit=10, per="-1s"), "RateLimit.per '-1s'"),
        (lambda: RateLimit(limit=10, per=0), "per=0"),
        (lambda: RateLimit(limit=10, per="8d"), "per='8d'"),
        (lambda: RateLimit(limit=10, per="1m", key="account_id"), "key='account_id'"),  # type: ignore[arg-type]
        (lambda: declare(rate=Concurrency(limit=1)), "is not a RateLimit"),  # type: ignore[arg-type]
    ],
)
def test_a_bad_rate_limit_is_refused_where_it_is_written(build: Any, named: str) -> None:
    with pytest.raises(FerryError) as refused:
        build()
    assert refused.value.code == "X_RATE_INVALID"
    assert named in refused.value.message and refused.value.fix


def test_a_body_is_a_function_that_declares_only_known_parameters() -> None:
    def generator_body(input: Org) -> Any:
        yield input

    async def odd_body(input: Org, request: object) -> None:
        return None

    with pytest.raises(FerryError, match="generator function"):
        job(input=Org, idempotency_key=lambda i: "k")(generator_body)
    with pytest.raises(FerryError, match="is not a function"):
        job(input=Org, idempotency_key=lambda i: "k")(print)
    with pytest.raises(FerryError, match="'request'"):
        job(input=Org, idempotency_key=lambda i: "k")(odd_body)


def test_a_def_body_is_a_sync_job_and_an_async_def_body_is_not() -> None:
    def blocking(input: Org) -> int:
        return 1

    async def awaiting(input: Org) -> int:
        return 1

    assert job(input=Org, idempotency_key=lambda i: "k")(blocking).definition.sync
    assert not job(input=Org, idempotency_key=lambda i: "k")(awaiting).definition.sync


async def test_an_empty_idempotency_key_is_refused_at_enqueue(ferry_harness: Any) -> None:
    handle = declare(idempotency_key=lambda i: "")
    with pytest.raises(FerryError) as refused:
        await handle.enqueue({"org_id": "o"})
    assert refused.value.code == "X_IDEMPOTENCY_REQUIRED"


@pytest.mark.parametrize(("actor", "code"), [("", "X_INVARIANT"), ("a\x00", "X_TEXT_NOT_STORABLE")])
def test_an_actor_that_is_no_name_is_refused(actor: str, code: str) -> None:
    with pytest.raises(FerryError) as refused:
        declare().as_actor(actor)
    assert refused.value.code == code and "actor" in refused.value.message


def test_a_task_tick_dedupes_against_every_stored_run_whatever_the_jobs_rule() -> None:
    """A tick's occurrence-scoped key is what absorbs a second scheduler firing the same
    occurrence, also after the first run of it has finished."""
    active = declare(dedupe="active", name="ticked")
    assert build_request(active.definition, {"org_id": "o1"}).dedupe == Dedupe(active_only=True)
    ticked = build_request(active.definition, {"org_id": "o1"}, key_prefix="nightly:1000")
    assert (ticked.idempotency_key, ticked.dedupe) == ("nightly:1000:k:o1", Dedupe())
