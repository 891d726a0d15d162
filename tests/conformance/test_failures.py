"""The failed attempts a run keeps, on every driver: each one's code, instant and
traceback, the newest 16 kB of them, read back by ``jobs show``."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from ferry import Retry, job
from ferry._clock import FrozenClock
from ferry._operations import list_runs, run_json, show_run
from ferry.drivers.failures import FAILURES_LIMIT, failure_record, failures_of
from ferry.drivers.protocol import JobDriver
from ferry.testing import Harness

from .jobs_fixture import flaky, reset


class Loud(BaseModel):
    id: str
    size: int


@job(
    input=Loud,
    idempotency_key=lambda i: f"loud:{i.id}",
    retry=Retry(attempts=6, base="1s"),
    name="conformance.loud",
)
async def loud(input: Loud, attempt: int) -> None:
    """Fails every attempt with a message of ``size`` characters naming the attempt."""
    raise ValueError(f"attempt {attempt} " + "x" * input.size)


@pytest.fixture(autouse=True)
def _fresh() -> None:
    reset()


async def test_each_failed_attempt_keeps_its_code_instant_and_traceback(
    harness: Harness, driver: JobDriver, clock: FrozenClock
) -> None:
    job_id = (await flaky.enqueue({"id": "a", "fail_times": 2})).job_id
    await harness.drain()
    run = await show_run(driver, job_id)
    assert run.summary.state == "completed"
    first, second = run.failures
    assert (first.attempt, second.attempt) == (1, 2)
    assert first.code == second.code == "X_JOB_FAILED"
    assert first.at_ms is not None and second.at_ms is not None and first.at_ms <= second.at_ms
    assert "Traceback (most recent call last)" in second.traceback
    assert "jobs_fixture.py" in second.traceback
    assert second.traceback.rstrip().endswith("RuntimeError: planned failure 2")
    shown = run_json(run)["failures"]
    assert shown[1]["attempt"] == 2 and shown[1]["at"].endswith("Z") and not shown[1]["cut"]
    # The listing shows the run as it is now: completed, no stale error.
    [listed] = (await list_runs(driver, {})).runs
    assert listed.state == "completed" and listed.last_error is None


async def test_a_run_keeps_the_newest_16_kB_of_its_failures(
    harness: Harness, driver: JobDriver
) -> None:
    job_id = (await loud.enqueue({"id": "a", "size": 5_000})).job_id
    await harness.drain()
    run = await show_run(driver, job_id)
    assert run.summary.state == "dead" and run.summary.attempts == 6
    kept = "".join(f"\x1e{f.traceback}" for f in run.failures)
    assert len(kept) <= FAILURES_LIMIT + 200 * len(run.failures)
    whole = [f for f in run.failures if not f.cut]
    assert whole[-1].attempt == 6 and "attempt 6 xxx" in whole[-1].traceback
    assert 1 not in [f.attempt for f in run.failures]  # the oldest fell off
    assert run.failures[0].cut  # the oldest kept one lost its start to the bound


def test_a_record_longer_than_the_bound_keeps_its_end() -> None:
    record = failure_record(attempt=3, code="X_JOB_FAILED", at_ms=1, traceback="a" * 50_000 + "END")
    assert len(record) <= FAILURES_LIMIT
    [failure] = failures_of(record)
    assert failure.attempt == 3 and failure.traceback.endswith("END")
    assert failures_of(record[5_000:])[0].cut
    tricky = failure_record(attempt=1, code="X", at_ms=1, traceback="a\x1eb\x1fc\x00d")
    [parsed] = failures_of(tricky)
    assert parsed.traceback == "a\\x1eb\\x1fc\\x00d"
