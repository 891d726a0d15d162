"""Results: what a body returns is its run's result, read back typed by the job's handle,
and a wait for it hears of the run's end from the driver — never a poll."""

from __future__ import annotations

import asyncio
from datetime import datetime
from uuid import UUID

import pytest
from support.waiting import eventually

from ferry import FerryError
from ferry._clock import FrozenClock
from ferry.testing import Harness

from . import jobs_fixture
from .jobs_workflows import Square, huge, opaque, slow, square, tag


@pytest.fixture(autouse=True)
def _fresh() -> None:
    jobs_fixture.reset()


async def test_the_result_is_what_the_body_returned_typed_by_its_return_annotation(
    harness: Harness,
) -> None:
    with harness.installed():
        queued = await square.enqueue({"n": 3})
        await harness.drain()
        result = await square.result(queued.job_id, timeout="1s")
        assert result == Square(n=3, square=9, at=datetime(2026, 1, 1))
        assert await queued.result() == result  # EnqueueResult offers the same
        tagged = await tag.enqueue({"n": 5})
        await harness.drain()
        assert (await tagged.result()).id == UUID(int=5)  # a UUID read back from its text
    run = await harness.driver.introspect.get_run(queued.job_id)
    assert run is not None and run.result == {"n": 3, "square": 9, "at": "2026-01-01T00:00:00"}


async def test_status_gives_state_attempts_and_progress(harness: Harness) -> None:
    with harness.installed():
        queued = await square.enqueue({"n": 4})
        before = await square.status(queued.job_id)
        assert (before.state, before.attempts, before.result) == ("queued", 0, None)
        await harness.drain()
        after = await queued.status()
        assert (after.state, after.attempts, after.max_attempts) == ("completed", 1, 3)
        assert after.result == {"n": 4, "square": 16, "at": "2026-01-01T00:00:00"}


async def test_a_dead_run_raises_its_own_code_and_last_error(harness: Harness) -> None:
    with harness.installed():
        queued = await square.enqueue({"n": 13})
        await harness.drain()
        with pytest.raises(FerryError) as dead:
            await queued.result(timeout="1s")
    assert dead.value.code == "X_VALIDATION"
    assert "is dead after 1 attempt(s): 13 is not squared here" in dead.value.message
    assert f"ferry jobs retry {queued.job_id}" in dead.value.fix


async def test_a_cancelled_run_has_no_result(harness: Harness) -> None:
    with harness.installed():
        queued = await square.enqueue({"n": 5})
        await harness.driver.introspect.cancel_run(queued.job_id)
        with pytest.raises(FerryError) as cancelled:
            await queued.result(timeout="1s")
    assert cancelled.value.code == "X_JOB_CANCELLED"
    assert f"run {queued.job_id}" in cancelled.value.message


async def test_a_run_that_does_not_end_in_time_is_a_timeout_and_goes_on(
    harness: Harness, clock: FrozenClock
) -> None:
    with harness.installed():
        queued = await slow.enqueue({"n": 1})
        await harness.drain()  # sleeping three days
        waiting = asyncio.create_task(queued.result(timeout="1s"))
        await asleep_on(clock, waiting)  # it waits on the clock: nothing polls it away
        clock.advance("1s")
        with pytest.raises(FerryError) as late:
            await waiting
    assert late.value.code == "X_RESULT_TIMEOUT"
    assert "still sleeping after 1,000 ms" in late.value.message
    assert (await slow.status(queued.job_id)).state == "sleeping"  # the run goes on


async def test_a_wait_hears_of_the_end_without_the_clock_moving(
    harness: Harness, clock: FrozenClock
) -> None:
    """The clock stands still, so the idle poll never comes round: only the driver's news
    of the run ending (NOTIFY, pub/sub, its own settle) can end this wait."""
    with harness.installed():
        queued = await square.enqueue({"n": 6})
        waiting = asyncio.create_task(queued.result(timeout="1s"))
        await asleep_on(clock, waiting)
        await harness.drain()
        result = await asyncio.wait_for(waiting, timeout=10)  # wall-clock guard only
    assert result.square == 36


async def test_an_unknown_or_pruned_run_is_not_found(harness: Harness) -> None:
    with harness.installed():
        for job_id in ("999999", "not-an-id"):
            with pytest.raises(FerryError) as missing:
                await square.result(job_id, timeout="1s")
            assert missing.value.code == "X_RUN_NOT_FOUND"
            with pytest.raises(FerryError) as missing:
                await square.status(job_id)
            assert missing.value.code == "X_RUN_NOT_FOUND"


async def test_a_run_of_another_job_is_refused(harness: Harness) -> None:
    with harness.installed():
        queued = await tag.enqueue({"n": 1})
        with pytest.raises(FerryError) as other:
            await square.result(queued.job_id, timeout="1s")
    assert other.value.code == "X_INVARIANT"
    assert 'is of job "wf.tag", not of job "wf.square"' in other.value.message


async def test_a_result_with_no_json_form_kills_the_run_naming_the_field(
    harness: Harness,
) -> None:
    with harness.installed():
        queued = await opaque.enqueue({"n": 1})
        trace = await harness.drain()
    assert trace.outcomes(opaque) == ["dead"]  # at once: a retry would return it again
    run = await harness.driver.introspect.get_run(queued.job_id)
    assert run is not None and run.summary.state == "dead" and run.result is None
    assert run.summary.last_error is not None
    assert run.summary.last_error.code == "X_PAYLOAD_NOT_JSON"
    assert 'job "wf.opaque" result.raw is bytes' in run.summary.last_error.message


@pytest.mark.driver_options(max_payload_bytes=100)
async def test_a_result_over_the_payload_limit_kills_the_run(harness: Harness) -> None:
    with harness.installed():
        small = await huge.enqueue({"n": 10})
        large = await huge.enqueue({"n": 200})
        await harness.drain()
        assert await small.result() == "x" * 10
        with pytest.raises(FerryError) as too_large:
            await large.result()
    assert too_large.value.code == "X_PAYLOAD_TOO_LARGE"
    assert 'job "wf.huge" result is 202 bytes of JSON' in too_large.value.message


async def test_bad_timeouts_are_refused_naming_the_field(harness: Harness) -> None:
    with harness.installed():
        queued = await square.enqueue({"n": 1})
        for timeout, code in (
            (10**20, "X_OUT_OF_RANGE"),
            ("soon", "X_INVARIANT"),
            (-1, "X_INVARIANT"),
        ):
            with pytest.raises(FerryError) as bad:
                await queued.result(timeout=timeout)
            assert bad.value.code == code
            assert 'job "wf.square".result() timeout' in bad.value.message


async def asleep_on(clock: FrozenClock, waiting: asyncio.Task[object]) -> None:
    """Return once ``waiting`` — a result wait of 1 s, shorter than any idle poll — sleeps
    on the frozen clock until its deadline (it read the run, found it going, and now waits
    for news), failing if it ended instead."""
    deadline = clock.now_ms() + 1_000

    def sleeping() -> bool:
        assert not waiting.done(), waiting
        return clock.next_deadline_ms() == deadline

    await eventually(sleeping, what="the result wait sleeping on the clock")
