"""Durable steps: memoized per run, the retry unit, durable sleep, refusals."""

from __future__ import annotations

import pytest

from ferry._clock import FrozenClock
from ferry.drivers.protocol import RunFilter
from ferry.testing import Harness

from . import jobs_fixture
from .jobs_steps import duplicate_steps, mail, onboard_org, opaque_step, reports_progress


@pytest.fixture(autouse=True)
def _fresh() -> None:
    jobs_fixture.reset()
    mail.fail_next.clear()
    mail.sent.clear()


async def test_onboarding_retries_only_the_failed_step_across_a_three_day_sleep(
    harness: Harness, clock: FrozenClock
) -> None:
    """The spec's example, as written: provision once, nudge twice."""
    mail.fail_once("nudge:free")
    await harness.run_jobs(onboard_org, {"org_id": "org-1"})
    clock.advance("3d")
    trace = await harness.drain()
    assert trace.steps["provision"].executions == 1
    assert trace.steps["welcome-email"].executions == 1
    assert trace.steps["nudge"].executions == 2
    assert mail.sent == ["welcome", "nudge:free"]
    assert trace.outcomes(onboard_org) == ["slept", "retried", "completed"]


async def test_a_sleeping_run_waits_for_the_clock_and_counts_no_attempt(
    harness: Harness, clock: FrozenClock
) -> None:
    result = await harness.run_jobs(onboard_org, {"org_id": "org-2"})
    run = await harness.driver.introspect.get_run(result.job_id)
    assert run is not None
    assert run.summary.state == "sleeping"
    assert run.summary.attempts == 0
    clock.advance("2d")
    trace = await harness.drain()
    assert trace.steps["nudge"].executions == 0
    clock.advance("1d")
    trace = await harness.drain()
    assert trace.steps["nudge"].executions == 1
    done = await harness.driver.introspect.get_run(result.job_id)
    assert done is not None and done.summary.state == "completed"
    assert done.summary.attempts == 1
    assert [s.name for s in done.steps] == ["provision", "welcome-email", "cool-off", "nudge"]


async def test_a_duplicate_step_name_in_one_run_is_refused(harness: Harness) -> None:
    await harness.run_jobs(duplicate_steps, {"org_id": "o"})
    [run] = await harness.driver.introspect.list_runs(RunFilter(name=duplicate_steps.name))
    assert run.state == "dead"
    assert run.last_error is not None and run.last_error.code == "X_STEP_DUPLICATE"
    assert '"same"' in run.last_error.message


async def test_a_step_result_with_no_json_form_is_refused(harness: Harness) -> None:
    await harness.run_jobs(opaque_step, {"org_id": "o"})
    [run] = await harness.driver.introspect.list_runs(RunFilter(name=opaque_step.name))
    assert run.last_error is not None and run.last_error.code == "X_PAYLOAD_NOT_JSON"
    assert 'step "bytes" result' in run.last_error.message


async def test_progress_and_result_are_recorded_on_the_run(harness: Harness) -> None:
    result = await harness.run_jobs(reports_progress, {"org_id": "o"})
    run = await harness.driver.introspect.get_run(result.job_id)
    assert run is not None
    assert run.progress is not None and (run.progress.current, run.progress.total) == (3, 3)
    assert run.result == {"rows": 3}
    assert run.steps[0].result == [1, 2, 3]
