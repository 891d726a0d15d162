"""The scheduler's task file: the operator's document → task handles over the app's jobs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from operator_app import api as demo_api
from operator_app import nudge_org

from ferry import scheduler_config, set_job_driver
from ferry._app import Api
from ferry.drivers import memory_job_driver
from ferry.errors import FerryError

ORG = "5f0c2a8e-8d5e-4a59-9b43-0c6a3c1c7a11"


def _document(**overrides: object) -> dict[str, object]:
    task = {
        "name": "nudge-orgs",
        "cron": "*/5 * * * *",
        "timeZone": "Europe/Berlin",
        "catchUp": "run-once",
        "maxCatchUp": 2,
        "entries": [{"job": "nudge_org", "input": {"org_id": ORG}}],
        **overrides,
    }
    return {"tasks": [task]}


def test_task_file_becomes_task_handles_whose_entries_are_the_apps_jobs() -> None:
    [handle] = scheduler_config.tasks_from_document(_document(), demo_api)
    assert (handle.name, handle.cron, handle.tz) == ("nudge-orgs", "*/5 * * * *", "Europe/Berlin")
    assert (handle.catch_up, handle.max_catch_up) == ("run-once", 2)
    [(job, value)] = handle.entries(0)
    assert job is nudge_org and value == {"org_id": ORG}


def test_occurrence_scoped_keys_make_a_double_fire_one_row() -> None:
    [handle] = scheduler_config.tasks_from_document(_document(), demo_api)
    [first] = handle.dispatch_requests(1_000)
    [again] = handle.dispatch_requests(1_000)
    [later] = handle.dispatch_requests(2_000)
    assert first.idempotency_key == again.idempotency_key != later.idempotency_key


def test_an_entry_enqueues_on_its_durable_jobs_queue_not_the_declared_one() -> None:
    """The operator writes the DurableJob's spec.queue into each entry: the queue its workers
    poll. A job declared on another queue is still fired there, by the tick and by hand."""
    entries = [{"job": "nudge_org", "queue": "nudges", "input": {"org_id": ORG}}]
    [handle] = scheduler_config.tasks_from_document(_document(entries=entries), demo_api)
    [(job, _)] = handle.entries(0)
    assert nudge_org.queue == "default" and job.queue == "nudges"
    [request] = handle.dispatch_requests(1_000)
    assert (request.name, request.queue) == ("nudge_org", "nudges")


async def test_a_task_fired_by_hand_goes_to_the_entrys_queue_too() -> None:
    entries = [{"job": "nudge_org", "queue": "nudges", "input": {"org_id": ORG}}]
    [handle] = scheduler_config.tasks_from_document(_document(entries=entries), demo_api)
    driver = memory_job_driver()
    previous = set_job_driver(driver)
    try:
        [fired] = await handle.enqueue()
    finally:
        set_job_driver(previous)
    [stats] = await driver.stats()
    assert fired["job"] == "nudge_org" and stats.queue == "nudges"


def test_an_entry_without_a_queue_uses_the_declared_one() -> None:
    [handle] = scheduler_config.tasks_from_document(_document(), demo_api)
    [request] = handle.dispatch_requests(1_000)
    assert request.queue == "default"


def test_an_entry_queue_that_is_not_a_name_is_refused() -> None:
    entries = [{"job": "nudge_org", "queue": " nudges", "input": {"org_id": ORG}}]
    with pytest.raises(FerryError) as refused:
        scheduler_config.tasks_from_document(_document(entries=entries), demo_api)
    assert refused.value.code == "X_INVARIANT"


def test_a_suspended_task_is_not_loaded() -> None:
    assert scheduler_config.tasks_from_document(_document(suspend=True), demo_api) == []


def test_an_entry_naming_a_job_the_app_lacks_is_refused() -> None:
    document = _document(entries=[{"job": "nope", "input": {}}])
    with pytest.raises(FerryError) as refused:
        scheduler_config.tasks_from_document(document, demo_api)
    assert refused.value.code == "X_JOB_UNKNOWN"
    assert '"nope"' in refused.value.message and "nudge_org" in refused.value.message


def test_a_zone_the_runtime_refuses_is_refused_at_load() -> None:
    with pytest.raises(FerryError) as refused:
        scheduler_config.tasks_from_document(_document(timeZone="+02:00"), demo_api)
    assert refused.value.code == "X_INVARIANT"


def test_an_unreadable_task_file_is_refused_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text("{not json")
    with pytest.raises(FerryError) as refused:
        scheduler_config.tasks_from_file(path, demo_api)
    assert str(path) in refused.value.message


def test_scheduler_api_is_the_app_with_the_files_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(_document()))
    monkeypatch.setenv("FERRY_TASKS_APP", "operator_app:api")
    monkeypatch.setenv("FERRY_TASKS_FILE", str(path))
    api = scheduler_config.api
    assert isinstance(api, Api)
    assert api.jobs == demo_api.jobs
    assert list(api.tasks) == ["nudge-orgs"]


def test_scheduler_api_without_its_env_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FERRY_TASKS_APP", raising=False)
    with pytest.raises(FerryError) as refused:
        _ = scheduler_config.api
    assert "FERRY_TASKS_APP" in refused.value.message
