"""Fan-out and fan-in: ``step.enqueue`` writes children once, ``step.wait`` parks the
parent durably until the last of them ends (in that end's own transaction or script) or
its deadline passes — on every driver, under the frozen clock."""

from __future__ import annotations

import pytest

from ferry import FerryError
from ferry._clock import FrozenClock
from ferry.drivers.protocol import RunDetail, RunFilter
from ferry.testing import Harness

from . import jobs_fixture
from .jobs_fixture import effects
from .jobs_workflows import (
    armed,
    big_fan_out,
    metered,
    mixed,
    patient,
    slow,
    square,
    sum_of_squares,
    sync_sum,
)


@pytest.fixture(autouse=True)
def _fresh() -> None:
    jobs_fixture.reset()
    armed.clear()


async def detail(harness: Harness, job_id: str) -> RunDetail:
    run = await harness.driver.introspect.get_run(job_id)
    assert run is not None
    return run


async def test_a_parent_parks_until_its_last_child_ends_then_resumes_once(
    harness: Harness,
) -> None:
    with harness.installed():
        queued = await sum_of_squares.enqueue({"n": 4})
        assert await harness.run_due() == 1  # the parent: fans out, then parks
        parent = await detail(harness, queued.job_id)
        assert (parent.summary.state, parent.summary.attempts) == ("sleeping", 0)
        assert (parent.children_count, parent.children_pending) == (4, 4)
        assert [c.parent_id for c in await children_of(harness, parent)] == [queued.job_id] * 4
        for left in (3, 2, 1):
            assert await harness.run_due() == 1  # a child (the parent is not due)
            parent = await detail(harness, queued.job_id)
            assert (parent.summary.state, parent.children_pending) == ("sleeping", left)
        assert await harness.run_due() == 1  # the last child: its settle makes the parent due
        parent = await detail(harness, queued.job_id)
        assert parent.summary.state == "sleeping" and parent.children_pending == 0
        assert parent.summary.run_at_ms <= harness.clock.now_ms()
        trace = await harness.drain()
        assert await queued.result() == 0 + 1 + 4 + 9
    assert trace.outcomes(sum_of_squares) == ["slept", "completed"]
    assert effects["sum:started"] == 2 and effects["sum:resumed"] == 1
    assert trace.steps["fan-out"].executions == 1 and trace.steps["gather"].executions == 1
    done = await detail(harness, queued.job_id)
    assert (done.summary.attempts, [s.name for s in done.steps]) == (1, ["fan-out", "gather"])


async def test_each_outcome_in_order_completed_dead_or_cancelled(
    harness: Harness, clock: FrozenClock
) -> None:
    with harness.installed():
        queued = await mixed.enqueue({"n": 0})
        await harness.drain()  # the square of 2 completes, 13 dies, the slow child sleeps
        parent = await detail(harness, queued.job_id)
        assert (parent.summary.state, parent.children_pending) == ("sleeping", 1)
        sleeper = next(c for c in parent.children if c.name == slow.name)
        await harness.driver.introspect.cancel_run(sleeper.id)  # its end wakes the parent
        await harness.drain()
        answer = await queued.result()
    assert answer == [
        "completed:Square(n=2, square=4, at=datetime.datetime(2026, 1, 1, 0, 0)):None",
        "dead:None:X_VALIDATION",
        "cancelled:None:X_CANCELLED",
    ]
    assert effects["mixed:resumed"] == 1


async def test_deleting_the_last_pending_child_resumes_the_parent_at_once(
    harness: Harness,
) -> None:
    """An operator's delete of a child that has not ended counts as its end: the parent
    stays parked while others are pending, and the delete of the last one makes it due —
    it resumes without the clock reaching its wait's deadline. Its wait then reads the
    deleted children as ``X_RUN_NOT_FOUND`` (a refusal naming the first of them, which
    fails the attempt), the other children as they ended."""
    with harness.installed():
        queued = await mixed.enqueue({"n": 2})
        assert await harness.run_due() == 1  # the parent fans out and parks
        parent = await detail(harness, queued.job_id)
        two, thirteen, sleeper = (c.id for c in parent.children)
        await harness.driver.introspect.delete_runs([thirteen])  # queued
        assert await harness.run_due() == 1  # the square of 2 completes
        assert await harness.run_due() == 1  # the slow child parks for three days
        parent = await detail(harness, queued.job_id)
        assert (parent.summary.state, parent.children_pending) == ("sleeping", 1)
        assert (await detail(harness, sleeper)).summary.state == "sleeping"
        assert await harness.run_due() == 0  # nothing is due: the parent waits
        await harness.driver.introspect.delete_runs([sleeper])  # sleeping, the last
        parent = await detail(harness, queued.job_id)
        assert (parent.children_pending, parent.summary.run_at_ms) == (0, harness.clock.now_ms())
        assert await harness.run_due() == 1  # the parent, with no clock advanced
    parent = await detail(harness, queued.job_id)
    assert (parent.summary.state, parent.summary.attempts) == ("queued", 1)  # retried
    assert parent.summary.last_error is not None
    assert parent.summary.last_error.code == "X_RUN_NOT_FOUND"
    assert f"child run {thirteen} of job" in parent.summary.last_error.message
    assert (await detail(harness, two)).summary.state == "completed"
    assert effects["mixed:resumed"] == 0


async def test_a_retry_after_the_fan_out_enqueues_nothing_again(harness: Harness) -> None:
    """The attempt fails right after its fan-out (as a crash would): the retry replays the
    fan-out from its record, and every child is one run."""
    armed["fail:after-fan-out"] = True
    with harness.installed():
        queued = await sum_of_squares.enqueue({"n": 3})
        trace = await harness.drain()
        assert await queued.result() == 0 + 1 + 4
    # The children ran during the retry's backoff, so the wait found them ended: no park.
    assert trace.outcomes(sum_of_squares) == ["retried", "completed"]
    assert effects["sum:fanned-out"] == 2  # the body passed the fan-out on both attempts...
    assert trace.steps["fan-out"].executions == 1  # ...and ran once
    assert len(trace.enqueued(square)) == 3
    assert [effects[f"square:{n}"] for n in range(3)] == [1, 1, 1]


async def test_the_wait_times_out_by_the_clock_and_fails_the_attempt(
    harness: Harness, clock: FrozenClock
) -> None:
    with harness.installed():
        queued = await patient.enqueue({"n": 5})
        trace = await harness.drain()
        assert trace.outcomes(patient) == ["slept"]
        clock.advance("1d")  # the wait's deadline; its child sleeps two days more
        trace = await harness.drain()
    assert trace.outcomes(patient) == ["slept", "retried", "retried", "dead"]
    run = await detail(harness, queued.job_id)
    assert run.summary.last_error is not None
    assert run.summary.last_error.code == "X_WAIT_TIMEOUT"
    assert "1 of 1 children had not ended by its deadline" in run.summary.last_error.message


async def test_children_that_end_before_the_deadline_let_a_retry_through(
    harness: Harness, clock: FrozenClock
) -> None:
    """The child wakes after three days; the parent timed out at one and retries with
    backoff until its attempts are spent, or until its child ended: here it did."""
    with harness.installed():
        queued = await patient.enqueue({"n": 5})
        await harness.drain()
        clock.advance("3d")  # past the deadline, and the child wakes too
        await harness.drain()
        assert await queued.result() == 5


async def test_cancelling_a_parent_cancels_its_children_that_have_not_ended(
    harness: Harness,
) -> None:
    with harness.installed():
        queued = await mixed.enqueue({"n": 1})
        await harness.run_due()  # the parent fans out and parks
        await harness.run_due()  # the square of 2 completes
        assert await harness.driver.introspect.cancel_run(queued.job_id) == "cancelled"
        parent = await detail(harness, queued.job_id)
        states = {c.name + str(i): c.state for i, c in enumerate(parent.children)}
        with pytest.raises(FerryError) as cancelled:
            await queued.result()
    assert cancelled.value.code == "X_JOB_CANCELLED"
    assert parent.summary.state == "cancelled"
    assert states == {"wf.square0": "completed", "wf.square1": "cancelled", "wf.slow2": "cancelled"}
    [child] = [c for c in parent.children if c.name == slow.name]
    assert child.last_error is not None and child.last_error.code == "X_CANCELLED"


async def test_a_fan_out_larger_than_a_batch_is_written_once_in_batches(harness: Harness) -> None:
    with harness.installed():
        queued = await big_fan_out.enqueue({"n": 1_234})
        trace = await harness.drain()
        assert await queued.result() == 1_234
    parent = await detail(harness, queued.job_id)
    assert (parent.children_count, parent.children_pending, len(parent.children)) == (
        1_234,
        0,
        100,
    )
    assert trace.outcomes(big_fan_out) == ["slept", "completed"]


async def test_a_child_list_with_a_non_job_is_refused_naming_it_and_writes_nothing(
    harness: Harness,
) -> None:
    with harness.installed():
        refusals = []
        for children in (
            [(square, {"n": 1}), ("wf.square", {"n": 2})],
            [(square, {"n": 1}), (square, {"n": "two"})],
            "wf.square",
        ):
            refusals.append(await refused_fan_out(harness, children))
    assert [r.code for r in refusals] == ["X_INVARIANT", "X_VALIDATION", "X_INVARIANT"]
    assert 'step.enqueue("fan-out") children[1] is not a (job, input) pair' in refusals[0].message
    assert 'step.enqueue("fan-out") children[1]: input for job "wf.square"' in refusals[1].message
    assert "children is a str" in refusals[2].message
    runs = await harness.driver.introspect.list_runs(RunFilter(name=square.name))
    assert runs == []  # the first, valid child of each list was not written either


async def test_a_sync_parent_fans_out_rated_children_that_start_within_their_limit(
    harness: Harness, clock: FrozenClock
) -> None:
    """A ``def`` body's ``step.enqueue`` and ``step.wait`` park and resume it like an async
    one's, and each child keeps its job's rate key: one start per second, so the drain
    fast-forwards exactly two seconds before the last child ends and wakes the parent."""
    t0 = clock.now_ms()
    with harness.installed():
        queued = await sync_sum.enqueue({"n": 3})
        trace = await harness.drain()
        assert await queued.result() == 0 + 1 + 2
    assert clock.now_ms() - t0 == 2_000
    assert trace.outcomes(sync_sum) == ["slept", "completed"]
    assert effects["sync-sum:resumed"] == 1
    parent = await detail(harness, queued.job_id)
    assert [c.name for c in parent.children] == [metered.name] * 3
    assert {(await detail(harness, c.id)).rate_key for c in parent.children} == {metered.name}


async def test_a_wait_on_what_is_not_children_or_too_long_is_refused_naming_it(
    harness: Harness,
) -> None:
    with harness.installed():
        not_children = await refused_wait(harness, "list", "1d")
        too_long = await refused_wait(harness, "children", 10**20)
    assert not_children.code == "X_INVARIANT"
    assert 'step.wait("gather") children is a list' in not_children.message
    assert too_long.code == "X_OUT_OF_RANGE"
    assert 'step.wait("gather") timeout is ' in too_long.message
    assert "over the longest duration ferry takes: 100 years" in too_long.message


async def refused_wait(harness: Harness, given: str, wait_for: object) -> FerryError:
    """What a parent whose ``step.wait`` is given ``given`` and ``wait_for`` died with (its
    wait recorded nothing)."""
    from ferry import Step, job

    from .jobs_workflows import Number

    @job(input=Number, idempotency_key=lambda i: f"waits:{given}:{wait_for}")
    async def parent(input: Number, step: Step) -> None:
        children = await step.enqueue("fan-out", [(square, {"n": 1})])
        await step.wait(
            "gather",
            children if given == "children" else list(children),  # type: ignore[arg-type]
            timeout=wait_for,  # type: ignore[arg-type]
        )

    queued = await parent.enqueue({"n": 0})
    await harness.drain()
    run = await detail(harness, queued.job_id)
    assert [step.name for step in run.steps] == ["fan-out"]
    assert run.summary.last_error is not None
    return FerryError(run.summary.last_error.code, run.summary.last_error.message, "-")


async def refused_fan_out(harness: Harness, children: object) -> FerryError:
    """What a parent whose fan-out is ``children`` died with."""
    from ferry import Step, job

    from .jobs_workflows import Number

    @job(input=Number, idempotency_key=lambda i: f"bad:{i.n}:{id(children)}")
    async def parent(input: Number, step: Step) -> None:
        await step.enqueue("fan-out", children)  # type: ignore[arg-type]

    queued = await parent.enqueue({"n": 0})
    await harness.drain()
    run = await detail(harness, queued.job_id)
    assert run.summary.last_error is not None
    return FerryError(run.summary.last_error.code, run.summary.last_error.message, "-")


async def children_of(harness: Harness, parent: RunDetail) -> list[RunDetail]:
    return [await detail(harness, child.id) for child in parent.children]
