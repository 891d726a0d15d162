"""The fan-in rules at the driver (``ferry.drivers.fan_in``): how children count in their
parent and when a parent parked on them is due — in every path that ends a child, the
worker's one-statement round trip included, where a child's end and its parent's park or
claim land together."""

from __future__ import annotations

from ferry._clock import FrozenClock
from ferry._jobs.facade import build_request
from ferry.drivers.fan_in import CANCELLED_WITH_PARENT
from ferry.drivers.protocol import (
    AckOptions,
    ClaimOptions,
    JobError,
    NackOptions,
    RetentionPolicy,
    RunDetail,
    RunFence,
)
from ferry.testing import Harness

from .jobs_workflows import square

LEASE = 30_000
DAY = 86_400_000


def claim(worker: str, limit: int = 10) -> ClaimOptions:
    return ClaimOptions(worker_id=worker, lease_ms=LEASE, limit=limit)


async def held_parent(harness: Harness, n: int = 100, worker: str = "w1") -> str:
    """A parent run (its own for each ``n``), claimed by ``worker``."""
    parent = (await square.enqueue({"n": n})).job_id
    [claimed] = await harness.driver.claim(claim(worker, limit=1))
    assert claimed.id == parent
    return parent


async def children_of(harness: Harness, parent: str, count: int, worker: str = "w1") -> list[str]:
    requests = [build_request(square.definition, {"n": n}, key_prefix=parent) for n in range(count)]
    written = await harness.driver.children.enqueue_children(RunFence(parent, worker), requests)
    assert not isinstance(written, str), written
    return [run.job_id for run in written]


async def run(harness: Harness, job_id: str) -> RunDetail:
    detail = await harness.driver.introspect.get_run(job_id)
    assert detail is not None
    return detail


async def park(
    harness: Harness, parent: str, clock: FrozenClock, for_ms: int = DAY, worker: str = "w1"
) -> None:
    """What ``step.wait`` does: mark the held parent, then settle it asleep until its
    deadline, ``for_ms`` from now."""
    assert await harness.driver.children.await_children(RunFence(parent, worker))
    parked = NackOptions(worker, "sleep", clock.now_ms() + for_ms)
    assert await harness.driver.nack(parent, parked)


async def test_children_count_in_their_parent_once_and_a_deduplicated_one_not_again(
    harness: Harness,
) -> None:
    parent = await held_parent(harness)
    first = await children_of(harness, parent, 3)
    again = await children_of(harness, parent, 4)  # three of them already written
    assert again[:3] == first
    detail = await run(harness, parent)
    assert (detail.children_count, detail.children_pending) == (4, 4)
    assert {(await run(harness, child)).parent_id for child in again} == {parent}


async def test_a_fan_out_is_fenced_on_the_parents_lease_and_on_its_cancel(
    harness: Harness,
) -> None:
    parent = await held_parent(harness)
    request = [build_request(square.definition, {"n": 1}, key_prefix=parent)]
    children = harness.driver.children
    assert await children.enqueue_children(RunFence(parent, "w2"), request) == "not-held"
    assert await children.await_children(RunFence(parent, "w2")) is False
    await harness.driver.introspect.cancel_run(parent)  # running: asked, not yet ended
    assert await children.enqueue_children(RunFence(parent, "w1"), request) == "cancel-requested"
    assert (await run(harness, parent)).children_count == 0  # nothing was written


async def parked_with_one_child_done(harness: Harness, clock: FrozenClock) -> tuple[str, str, str]:
    """A parent parked on two children, the first of them completed and the second held
    by ``w2``: answers the parent, the first and the second."""
    parent = await held_parent(harness)
    first, second = await children_of(harness, parent, 2)
    await park(harness, parent, clock)
    await harness.driver.claim(claim("w2"))
    assert await harness.driver.ack(first, AckOptions("w2", 1))
    return parent, first, second


async def test_the_last_child_to_end_makes_the_parked_parent_due(
    harness: Harness, clock: FrozenClock
) -> None:
    parent, _, second = await parked_with_one_child_done(harness, clock)
    detail = await run(harness, parent)
    assert (detail.summary.state, detail.children_pending) == ("sleeping", 1)
    assert detail.summary.run_at_ms == clock.now_ms() + DAY
    clock.advance("1s")
    dead = NackOptions("w2", "dead", error=JobError("X_VALIDATION", "no"))
    assert await harness.driver.nack(second, dead)
    detail = await run(harness, parent)
    assert (detail.summary.state, detail.children_pending) == ("sleeping", 0)
    assert detail.summary.run_at_ms == clock.now_ms()  # due now, by the child's own settle
    [resumed] = await harness.driver.claim(claim("w1"))
    assert resumed.id == parent and resumed.attempt == 1  # the park counted no attempt


async def test_a_park_after_the_last_child_ended_is_due_at_once(
    harness: Harness, clock: FrozenClock
) -> None:
    """The last child ends (or is deleted before its end) between the wait's read of it
    and the parent's park."""
    parents = [await held_parent(harness, n) for n in range(2)]
    for parent, how in zip(parents, ("acked", "deleted"), strict=True):
        [child] = await children_of(harness, parent, 1)
        if how == "acked":
            await harness.driver.claim(claim("w2"))
            assert await harness.driver.ack(child, AckOptions("w2"))
        else:
            assert [c.changed for c in await harness.driver.introspect.delete_runs([child])]
        assert (await run(harness, parent)).children_pending == 0, how
        await park(harness, parent, clock)
        detail = await run(harness, parent)
        assert detail.summary.state == "sleeping", how
        assert detail.summary.run_at_ms == clock.now_ms(), how


async def test_a_childs_end_and_its_parents_park_in_one_round_trip(
    harness: Harness, clock: FrozenClock
) -> None:
    """One worker holds both, and settles both in one batch (one statement on Postgres,
    one script on Redis, one transaction on SQLite), in either order."""
    for n, order in enumerate(("child first", "parent first")):
        parent = await held_parent(harness, n)
        [child] = await children_of(harness, parent, 1)
        [claimed] = await harness.driver.claim(claim("w1"))
        assert claimed.id == child
        assert await harness.driver.children.await_children(RunFence(parent, "w1"))
        settles = [
            (child, AckOptions("w1", 1)),
            (parent, NackOptions("w1", "sleep", clock.now_ms() + DAY)),
        ]
        landed = await harness.driver.settle_many(
            settles if order == "child first" else settles[::-1]
        )
        assert landed == [True, True]
        detail = await run(harness, parent)
        assert (detail.summary.state, detail.children_pending) == ("sleeping", 0), order
        assert detail.summary.run_at_ms == clock.now_ms(), order
        [resumed] = await harness.driver.claim(claim("w1"))
        assert await harness.driver.ack(resumed.id, AckOptions("w1"))


async def test_a_childs_end_in_the_round_trip_that_claims_its_parent_still_counts(
    harness: Harness, clock: FrozenClock
) -> None:
    """The parent's wait timed out (due by its deadline) while its last child runs: the
    child's settle and the parent's claim share one round trip."""
    parent = await held_parent(harness)
    first, second = await children_of(harness, parent, 2)
    await park(harness, parent, clock, for_ms=10_000)
    claimed = await harness.driver.claim(claim("w2"))
    assert {c.id for c in claimed} == {first, second}
    assert await harness.driver.ack(first, AckOptions("w2"))
    clock.advance("10s")
    landed, resumed = await harness.driver.settle_and_claim(
        [(second, AckOptions("w2"))], claim("w1")
    )
    assert landed == [True] and [c.id for c in resumed] == [parent]
    detail = await run(harness, parent)
    assert (detail.summary.state, detail.children_pending) == ("running", 0)


async def test_a_sleep_after_a_finished_wait_is_not_cut_short(
    harness: Harness, clock: FrozenClock
) -> None:
    """The mark of a wait ends with it: the parent's next park (a ``step.sleep``) sleeps
    its whole time although no child is pending."""
    parent = await held_parent(harness)
    [child] = await children_of(harness, parent, 1)
    await park(harness, parent, clock)
    await harness.driver.claim(claim("w2"))
    await harness.driver.ack(child, AckOptions("w2"))
    await harness.driver.claim(claim("w1"))  # the parent resumes
    assert await harness.driver.nack(parent, NackOptions("w1", "sleep", clock.now_ms() + DAY))
    detail = await run(harness, parent)
    assert detail.summary.run_at_ms == clock.now_ms() + DAY


async def test_an_operators_retry_of_an_ended_child_counts_it_again(
    harness: Harness, clock: FrozenClock
) -> None:
    parent = await held_parent(harness)
    [child] = await children_of(harness, parent, 1)
    await harness.driver.introspect.cancel_run(child)  # queued: ends at once
    assert (await run(harness, parent)).children_pending == 0
    await harness.driver.introspect.retry_run(child)
    assert (await run(harness, parent)).children_pending == 1


async def test_a_child_is_kept_from_prune_while_its_parent_has_not_ended(
    harness: Harness, clock: FrozenClock
) -> None:
    parent = await held_parent(harness)
    [child] = await children_of(harness, parent, 1)
    await harness.driver.claim(claim("w2"))
    await harness.driver.ack(child, AckOptions("w2"))
    clock.advance("2d")
    policy = RetentionPolicy(completed_ms=DAY, dead_ms=DAY, published_outbox_ms=None)
    assert (await harness.driver.prune(policy)).completed == 0
    [lapsed] = await harness.driver.claim(claim("w1"))  # the parent's lease lapsed: retaken
    assert await harness.driver.ack(lapsed.id, AckOptions("w1"))
    clock.advance("2d")
    assert (await harness.driver.prune(policy)).completed == 2


async def test_cancelling_many_parents_cancels_the_children_of_each_that_changed(
    harness: Harness,
) -> None:
    """The many-run cancel (a bulk action's) applies the one-run rule to each run."""
    first = (await square.enqueue({"n": 101})).job_id
    second = (await square.enqueue({"n": 102})).job_id
    assert {run.id for run in await harness.driver.claim(claim("w1", limit=2))} == {
        first,
        second,
    }
    children = [
        *await children_of(harness, first, 2),
        *await children_of(harness, second, 1),
    ]
    changes = await harness.driver.introspect.cancel_runs([first, second])
    assert {(c.id, c.state, c.changed) for c in changes} == {
        (first, "running", True),
        (second, "running", True),
    }
    for child in children:
        detail = await run(harness, child)
        assert detail.summary.state == "cancelled"
        assert detail.summary.last_error is not None
        assert detail.summary.last_error.message == CANCELLED_WITH_PARENT.message


async def test_deleting_a_child_before_its_end_counts_as_its_end(
    harness: Harness, clock: FrozenClock
) -> None:
    """A queued or a sleeping child deleted by an operator lowers its parent's count in the
    delete's own statement, transaction or script; the last one makes the parent due at
    once, with no clock advanced to its wait's deadline."""
    parent = await held_parent(harness)
    queued, done, sleeper = await children_of(harness, parent, 3)
    await park(harness, parent, clock)
    [change] = await harness.driver.introspect.delete_runs([queued])
    assert (change.id, change.state, change.changed) == (queued, "queued", True)
    detail = await run(harness, parent)
    assert (detail.summary.state, detail.children_pending) == ("sleeping", 2)
    assert detail.summary.run_at_ms == clock.now_ms() + DAY  # others pending: still parked
    assert {c.id for c in await harness.driver.claim(claim("w2"))} == {done, sleeper}
    assert await harness.driver.ack(done, AckOptions("w2", 1))
    assert await harness.driver.nack(sleeper, NackOptions("w2", "sleep", clock.now_ms() + DAY))
    clock.advance("1s")
    [change] = await harness.driver.introspect.delete_runs([sleeper])
    assert (change.state, change.changed) == ("sleeping", True)
    detail = await run(harness, parent)
    assert (detail.summary.state, detail.children_pending) == ("sleeping", 0)
    assert detail.summary.run_at_ms <= clock.now_ms()
    [resumed] = await harness.driver.claim(claim("w1"))
    assert resumed.id == parent and resumed.attempt == 1  # the park counted no attempt
    assert await harness.driver.introspect.get_run(queued) is None
    assert await harness.driver.introspect.get_run(sleeper) is None
    assert (await run(harness, done)).summary.state == "completed"


async def test_deleting_an_ended_child_does_not_count_it_again(
    harness: Harness, clock: FrozenClock
) -> None:
    """The child was counted when it ended: its parent still waits for the other."""
    parent, first, second = await parked_with_one_child_done(harness, clock)
    [change] = await harness.driver.introspect.delete_runs([first])
    assert (change.state, change.changed) == ("completed", True)
    detail = await run(harness, parent)
    assert (detail.summary.state, detail.children_pending) == ("sleeping", 1)
    assert detail.summary.run_at_ms == clock.now_ms() + DAY
    assert await harness.driver.claim(claim("w1")) == []  # the parent is not due
    assert await harness.driver.ack(second, AckOptions("w2", 4))
    [resumed] = await harness.driver.claim(claim("w1"))
    assert resumed.id == parent


async def test_one_bulk_delete_counts_each_child_once_and_a_deleted_parent_as_before(
    harness: Harness, clock: FrozenClock
) -> None:
    """One many-run delete (a bulk action's) of a parked parent with one of its children,
    and of another parked parent's only child: the first parent is gone, its other child
    stays with its parent id as a delete always left it; the second parent is due."""
    gone = await held_parent(harness, 101)
    waiting = await held_parent(harness, 102)
    gone_children = await children_of(harness, gone, 2)
    await park(harness, gone, clock)
    [only] = await children_of(harness, waiting, 1)
    await park(harness, waiting, clock)
    changes = await harness.driver.introspect.delete_runs([gone, gone_children[0], only])
    assert {(c.id, c.changed) for c in changes} == {
        (gone, True),
        (gone_children[0], True),
        (only, True),
    }
    assert await harness.driver.introspect.get_run(gone) is None
    left = await run(harness, gone_children[1])
    assert (left.summary.state, left.parent_id) == ("queued", gone)
    detail = await run(harness, waiting)
    assert (detail.children_pending, detail.summary.run_at_ms <= clock.now_ms()) == (0, True)
    claimed = await harness.driver.claim(claim("w1"))
    assert {c.id for c in claimed} == {waiting, gone_children[1]}
