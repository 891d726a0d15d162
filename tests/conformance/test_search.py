"""Search, views and bulk actions, the same on every driver: a key prefix, an error code,
text in the error, JSON the input contains, the scheduled / retrying / sleeping / dead
views, search windows, and bulk retry, cancel and delete of exactly the previewed runs."""

from __future__ import annotations

from typing import Any

import pytest

from ferry import FerryError
from ferry._clock import FrozenClock
from ferry._operations import bulk, list_runs
from ferry._operations import runs as runs_module
from ferry.drivers.protocol import (
    ClaimOptions,
    EnqueueRequest,
    JobDriver,
    JobError,
    NackOptions,
    RunFilter,
)
from ferry.testing import Harness

from .jobs_fixture import flaky, reset

CONTAINMENT: list[tuple[Any, Any, bool]] = [
    ({"a": 1, "b": {"c": [1, 2, 3]}}, {"a": 1}, True),
    ({"a": 1, "b": {"c": [1, 2, 3]}}, {"b": {"c": [3, 1]}}, True),
    ({"a": 1, "b": {"c": [1, 2, 3]}}, {"b": {"c": [4]}}, False),
    ({"a": 1}, {"a": 1.0}, True),
    ({"a": 1}, {"a": "1"}, False),
    ({"a": True}, {"a": 1}, False),
    ({"a": None}, {"a": None}, True),
    ({"a": [{"x": 1, "y": 2}]}, {"a": [{"x": 1}]}, True),
    ({"a": "text"}, {}, True),
    ({"a": [1, [2, 3]]}, {"a": [[3]]}, True),
    ({"a": [1, 2]}, {"a": 1}, False),  # a nested array holds no bare scalar
    ([1, 2, "x"], "x", True),  # a top-level array does
    ([1, 2], [2, 2, 1], True),
    ({"a": {}}, {"a": []}, False),
    ("x", "x", True),
]


@pytest.fixture(autouse=True)
def _fresh() -> None:
    reset()


async def _enqueue(driver: JobDriver, key: str, payload: Any, **more: Any) -> str:
    request = EnqueueRequest(
        name="search.job",
        queue=more.pop("queue", "default"),
        payload=payload,
        idempotency_key=key,
        max_attempts=3,
        **more,
    )
    return (await driver.enqueue(request)).job_id


async def _ids(driver: JobDriver, **words: str) -> list[str]:
    return [r.id for r in (await list_runs(driver, words)).runs]


async def test_a_key_prefix_finds_exactly_the_keys_that_start_with_it(driver: JobDriver) -> None:
    ids = {
        key: await _enqueue(driver, key, {"n": n})
        for n, key in enumerate(["order:1", "order:10", "order:2", "orders", "ord", "x:order:1"])
    }
    assert await _ids(driver, key="order:1") == [ids["order:10"], ids["order:1"]]
    assert await _ids(driver, key="order") == [
        ids["orders"],
        ids["order:2"],
        ids["order:10"],
        ids["order:1"],
    ]
    assert await _ids(driver, key="zz") == []
    unicode_id = await _enqueue(driver, "é\U0010ffffz", {})
    assert await _ids(driver, key="é\U0010ffff") == [unicode_id]
    assert await _ids(driver, key="é") == [unicode_id]


async def test_errors_are_found_by_code_and_by_text_in_either_case(
    harness: Harness, driver: JobDriver
) -> None:
    failed = (await flaky.enqueue({"id": "a", "fail_times": 1})).job_id
    dead = (await flaky.enqueue({"id": "b", "fail_times": 5})).job_id
    fine = (await flaky.enqueue({"id": "c"})).job_id
    await harness.drain()
    assert await _ids(driver, error_code="X_JOB_FAILED") == [dead, failed]
    assert await _ids(driver, error_text="PLANNED failure") == [dead, failed]
    assert await _ids(driver, error_text="planned failure 3") == [dead]
    assert await _ids(driver, error_text="no such text") == []
    assert fine not in await _ids(driver, error_code="X_JOB_FAILED")
    listed = {r.id: r for r in (await list_runs(driver, {})).runs}
    assert listed[failed].state == "completed" and listed[failed].last_error is None
    assert listed[dead].last_error is not None  # the dead run's error is what it is


@pytest.mark.parametrize(("document", "pattern", "contained"), CONTAINMENT)
async def test_an_input_search_follows_jsonb_containment(
    driver: JobDriver, document: Any, pattern: Any, contained: bool
) -> None:
    import json

    job_id = await _enqueue(driver, "doc", document)
    await _enqueue(driver, "other", {"unrelated": True})
    found = await _ids(driver, input=json.dumps(pattern))
    assert (job_id in found) is contained


async def test_views_list_scheduled_retrying_sleeping_and_dead_runs(
    harness: Harness, driver: JobDriver, clock: FrozenClock
) -> None:
    dead = (await flaky.enqueue({"id": "d", "fail_times": 9})).job_id
    await harness.drain()
    now = clock.now_ms()
    due = await _enqueue(driver, "due", {})
    later = await _enqueue(driver, "later", {}, run_at_ms=now + 3_600_000)
    retrying = await _enqueue(driver, "retrying", {}, queue="r")
    [claimed] = await driver.claim(ClaimOptions("w", 30_000, 1, queues=["r"]))
    failed = JobError("X_JOB_FAILED", "boom")
    retry = NackOptions("w", "retry", run_at_ms=now + 60_000, error=failed)
    assert await driver.nack(claimed.id, retry)
    assert await _ids(driver, view="scheduled") == [later]
    assert await _ids(driver, view="retrying") == [retrying]
    assert await _ids(driver, view="dead") == [dead]
    assert await _ids(driver, view="sleeping") == []
    assert due in await _ids(driver, state="queued")
    with pytest.raises(FerryError) as contradicts:
        await _ids(driver, view="dead", state="queued")
    assert contradicts.value.code == "X_INVARIANT"


async def test_a_search_reads_a_bounded_window_of_ids_and_pages_on_below_it(
    driver: JobDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runs_module, "SEARCH_WINDOW", 3)
    ids = [await _enqueue(driver, f"k{n}", {"n": n, "odd": n % 2 == 1}) for n in range(8)]
    pages = []
    before: str | None = None
    while True:
        page = await list_runs(driver, {"input": '{"odd": true}', "before": before})
        pages.append([r.id for r in page.runs])
        before = page.next_before_id
        if before is None:
            break
    # Windows of three ids below the newest run's and each page's `before`: the runs n=7
    # and 5 (of ids 6..8), n=3 (of 3..5), n=1 (of 1..2); then nothing older is left.
    assert pages == [[ids[7], ids[5]], [ids[3]], [ids[1]]]
    full = await driver.introspect.list_runs(RunFilter(input_contains='{"odd":true}'))
    assert [r.id for r in full] == [ids[7], ids[5], ids[3], ids[1]]  # no window in the driver


async def test_a_bulk_retry_acts_on_exactly_the_previewed_runs(
    harness: Harness, driver: JobDriver
) -> None:
    dead = [(await flaky.enqueue({"id": f"d{n}", "fail_times": 9})).job_id for n in range(3)]
    await harness.drain()
    selection = await bulk.preview(driver, "retry", {"view": "dead"})
    assert sorted(selection.ids) == sorted(dead)
    done = await bulk.apply(driver, "retry", {"view": "dead"}, selection.token)
    assert done.data["changed"] == 3 and done.data["skipped"] == []
    for job_id in dead:
        run = await driver.introspect.get_run(job_id)
        assert run is not None and (run.summary.state, run.summary.attempts) == ("queued", 0)


async def test_a_selection_that_changed_since_the_preview_changes_nothing(
    harness: Harness, driver: JobDriver
) -> None:
    first = (await flaky.enqueue({"id": "a", "fail_times": 9})).job_id
    await harness.drain()
    selection = await bulk.preview(driver, "retry", {"state": "dead"})
    second = (await flaky.enqueue({"id": "b", "fail_times": 9})).job_id
    await harness.drain()
    with pytest.raises(FerryError) as changed:
        await bulk.apply(driver, "retry", {"state": "dead"}, selection.token)
    assert changed.value.code == "X_SELECTION_CHANGED"
    for job_id in (first, second):
        run = await driver.introspect.get_run(job_id)
        assert run is not None and run.summary.state == "dead"


async def test_bulk_cancel_and_delete_change_only_runs_they_apply_to(
    harness: Harness, driver: JobDriver
) -> None:
    queued = [await _enqueue(driver, f"q{n}", {}, queue="bulk") for n in range(3)]
    [running] = await driver.claim(ClaimOptions("w", 60_000, 1, queues=["bulk"]))
    cancel = await bulk.preview(driver, "cancel", {"queue": "bulk"})
    assert sorted(cancel.ids) == sorted(queued)
    done = await bulk.apply(driver, "cancel", {"queue": "bulk"}, cancel.token)
    assert done.data["changed"] == 3
    held = await driver.introspect.get_run(running.id)
    assert held is not None and held.summary.state == "running"
    assert held.cancel_requested_at_ms is not None  # its worker is asked to stop

    delete = await bulk.preview(driver, "delete", {"queue": "bulk"})
    assert running.id not in delete.ids  # a worker holds it
    await bulk.apply(driver, "delete", {"queue": "bulk"}, delete.token)
    assert [r.id for r in (await list_runs(driver, {"queue": "bulk"})).runs] == [running.id]
    assert await driver.introspect.get_run(delete.ids[0]) is None


async def test_a_bulk_action_needs_a_filter_and_refuses_malformed_words(
    driver: JobDriver,
) -> None:
    for words, named in [
        ({}, "needs a filter"),
        ({"input": "{not json"}, "is not JSON"),
        ({"view": "later"}, "is not a view"),
        ({"state": "finished"}, "is not a run state"),
    ]:
        with pytest.raises(FerryError) as refused:
            await bulk.preview(driver, "delete", words)
        assert refused.value.code == "X_INVARIANT" and named in refused.value.message
    with pytest.raises(FerryError) as action:
        bulk.bulk_action("explode")
    assert action.value.code == "X_INVARIANT"
