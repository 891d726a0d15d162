"""JobIntrospection: what every operator surface reads, the same on every driver."""

from __future__ import annotations

import pytest

from ferry import FerryError
from ferry.clock import FrozenClock
from ferry.drivers.protocol import ClaimOptions, RunFilter
from ferry.testing import Harness

from .jobs_fixture import flaky, reset


@pytest.fixture(autouse=True)
def _fresh() -> None:
    reset()


async def test_list_runs_filters_and_pages_newest_first(
    harness: Harness, clock: FrozenClock
) -> None:
    ids = [
        (await flaky.enqueue({"id": str(i)}, queue="q" if i % 2 else "default")).job_id
        for i in range(6)
    ]
    introspect = harness.driver.introspect
    newest = await introspect.list_runs(RunFilter(limit=4))
    assert [r.id for r in newest] == ids[::-1][:4]
    older = await introspect.list_runs(RunFilter(limit=4, before_id=newest[-1].id))
    assert [r.id for r in older] == ids[::-1][4:]
    assert [r.id for r in await introspect.list_runs(RunFilter(queue="q"))] == ids[5::-2]
    assert await introspect.list_runs(RunFilter(state="dead")) == []
    assert len(await introspect.list_runs(RunFilter(name=flaky.name, state="queued"))) == 6


async def test_a_dead_run_can_be_retried_with_fresh_attempts(harness: Harness) -> None:
    job_id = (await flaky.enqueue({"id": "a", "fail_times": 3})).job_id
    await harness.drain()
    introspect = harness.driver.introspect
    with pytest.raises(FerryError) as wrong:
        await introspect.cancel_run(job_id)
    assert wrong.value.code == "X_RUN_STATE"
    await introspect.retry_run(job_id)
    run = await introspect.get_run(job_id)
    assert run is not None and (run.summary.state, run.summary.attempts) == ("queued", 0)
    trace = await harness.drain()
    assert trace.outcomes(flaky) == ["retried", "retried", "dead"] * 2, "it ran all over again"


async def test_a_queued_run_can_be_cancelled_and_is_never_claimed(harness: Harness) -> None:
    job_id = (await flaky.enqueue({"id": "a"})).job_id
    introspect = harness.driver.introspect
    assert await introspect.cancel_run(job_id) == "cancelled"
    assert await harness.driver.claim(ClaimOptions("w", 30_000, 10)) == []
    run = await introspect.get_run(job_id)
    assert run is not None and run.summary.last_error is not None
    assert run.summary.last_error.code == "X_CANCELLED"
    with pytest.raises(FerryError) as wrong:
        await introspect.retry_run((await flaky.enqueue({"id": "b"})).job_id)
    assert wrong.value.code == "X_RUN_STATE"


async def test_an_unknown_run_id_is_refused(harness: Harness) -> None:
    with pytest.raises(FerryError) as missing:
        await harness.driver.introspect.retry_run("999999")
    assert missing.value.code == "X_RUN_NOT_FOUND"
    assert "999999" in missing.value.message
    assert await harness.driver.introspect.get_run("999999") is None


async def test_stats_count_every_state_per_queue(harness: Harness) -> None:
    await flaky.enqueue({"id": "a"})
    await flaky.enqueue({"id": "b", "fail_times": 9})
    await harness.drain()
    await harness.driver.introspect.pause_queue("idle")
    stats = {s.queue: s for s in await harness.driver.stats()}
    assert stats["default"].counts["completed"] == 1
    assert stats["default"].counts["dead"] == 1
    assert stats["default"].counts["queued"] == 0
    assert stats["idle"].paused is True
