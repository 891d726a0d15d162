"""Moving runs between stores (``RunTransfer``, what ``ferry jobs drain`` runs on): a
reservation is exclusive, unclaimable and survives a restart; an import is faithful and
idempotent and reports a key held by a different run; a remove is fenced on the drain."""

from __future__ import annotations

from typing import cast

import pytest

from ferry._clock import FrozenClock
from ferry._move import move_runs
from ferry._worker import JobWorker
from ferry.drivers.protocol import (
    AckOptions,
    ClaimOptions,
    EnqueueRequest,
    ImportResult,
    JobDriver,
    JobError,
    MovedRun,
    NackOptions,
    RunFilter,
    StepRecord,
)
from ferry.testing import Harness

from . import jobs_fixture
from .conftest import Reopen
from .jobs_steps import mail, onboard_org

TARGET = "postgresql://new-db:5432/app?schema=ferry"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    jobs_fixture.reset()
    mail.fail_next.clear()
    mail.sent.clear()


def request(key: str, *, queue: str = "default", **fields: object) -> EnqueueRequest:
    values: dict[str, object] = {
        "name": "transfer.job",
        "queue": queue,
        "payload": {"key": key, "nested": [1, 2.5, None, "x"]},
        "idempotency_key": key,
        "max_attempts": 3,
        **fields,
    }
    return EnqueueRequest(**values)  # type: ignore[arg-type]


async def enqueue(driver: JobDriver, key: str, **fields: object) -> str:
    return (await driver.enqueue(request(key, **fields))).job_id


async def claim_one(driver: JobDriver, key: str, worker: str = "w") -> str:
    """Enqueue ``key`` and claim it at once (nothing else may be due)."""
    job_id = await enqueue(driver, key)
    [claimed] = await driver.claim(ClaimOptions(worker_id=worker, lease_ms=60_000))
    assert claimed.id == job_id
    return job_id


async def every_state(driver: JobDriver, clock: FrozenClock) -> dict[str, str]:
    """One run in each state a drain leaves alone, one dead, then two queued (one delayed)."""
    ids = {"running": await claim_one(driver, "running")}
    ids["sleeping"] = await claim_one(driver, "sleeping")
    await driver.nack(
        ids["sleeping"], NackOptions("w", "sleep", run_at_ms=clock.now_ms() + 86_400_000)
    )
    ids["completed"] = await claim_one(driver, "completed")
    await driver.ack(ids["completed"], AckOptions("w"))
    ids["dead"] = await claim_one(driver, "dead")
    await driver.nack(ids["dead"], NackOptions("w", "dead", error=JobError("X_JOB_FAILED", "no")))
    ids["cancelled"] = await enqueue(driver, "cancelled")
    await driver.introspect.cancel_run(ids["cancelled"])
    ids["queued"] = await enqueue(driver, "queued")
    ids["delayed"] = await enqueue(driver, "delayed", run_at_ms=clock.now_ms() + 3_600_000)
    return ids


async def state_of(driver: JobDriver, job_id: str) -> str | None:
    run = await driver.introspect.get_run(job_id)
    return run.summary.state if run is not None else None


async def test_a_drain_reserves_queued_runs_and_with_the_flag_dead_ones_and_nothing_in_flight(
    driver: JobDriver, clock: FrozenClock
) -> None:
    ids = await every_state(driver, clock)
    reserved = await driver.transfer.reserve("drain-1", target=TARGET, limit=100)
    assert {run.id for run in reserved} == {ids["queued"], ids["delayed"]}
    assert {run.state for run in reserved} == {"queued"}
    with_dead = await driver.transfer.reserve(
        "drain-1", target=TARGET, limit=100, include_dead=True
    )
    assert [(run.id, run.state) for run in with_dead] == [(ids["dead"], "dead")]
    for kept in ("running", "sleeping", "completed", "cancelled"):
        assert await state_of(driver, ids[kept]) == kept


async def test_a_reserved_run_is_moving_unclaimable_and_visible_to_operators(
    driver: JobDriver, clock: FrozenClock
) -> None:
    ids = [await enqueue(driver, f"k{n}") for n in range(3)]
    await driver.transfer.reserve("drain-1", target=TARGET, limit=2)
    clock.advance("1d")  # any lease would have lapsed by now; a reservation has none
    claimed = await driver.claim(ClaimOptions(worker_id="w", lease_ms=1_000, limit=10))
    assert [run.id for run in claimed] == [ids[2]]
    moving = await driver.introspect.list_runs(RunFilter(state="moving"))
    assert sorted(run.id for run in moving) == sorted(ids[:2])
    [stats] = await driver.stats()
    assert (stats.counts["moving"], stats.counts["running"]) == (2, 1)
    detail = await driver.introspect.get_run(ids[0])
    assert detail is not None and detail.locked_by == "drain-1"
    with pytest.raises(Exception, match="X_RUN_STATE"):
        await driver.introspect.cancel_run(ids[0])


async def test_a_reservation_is_exclusive_and_a_rerun_to_the_same_target_takes_it_over(
    driver: JobDriver,
) -> None:
    ids = [await enqueue(driver, f"k{n}") for n in range(2)]
    first = await driver.transfer.reserve("drain-1", target=TARGET, limit=10)
    assert len(first) == 2
    assert await driver.transfer.reserve("drain-1", target=TARGET, limit=10) == []
    elsewhere = "postgresql://other:5432/app?schema=ferry"
    assert await driver.transfer.reserve("drain-2", target=elsewhere, limit=10) == []
    rerun = await driver.transfer.reserve("drain-2", target=TARGET, limit=10)
    assert sorted(run.id for run in rerun) == sorted(ids)
    assert {run.state for run in rerun} == {"queued"}, "the state before the first reservation"
    assert await driver.transfer.remove("drain-1", ids) == [], "the first drain lost its hold"
    assert sorted(await driver.transfer.remove("drain-2", ids)) == sorted(ids)


async def test_a_reservation_survives_a_restart_and_the_rerun_picks_it_up(
    driver: JobDriver, clock: FrozenClock, reopen: Reopen
) -> None:
    job_id = await claim_one(driver, "k")
    await driver.steps.record(job_id, StepRecord("first", "run", {"a": 1}, 1, 2), worker_id="w")
    await driver.nack(job_id, NackOptions("w", "retry", error=JobError("X_JOB_FAILED", "boom")))
    await driver.transfer.reserve("drain-1", target=TARGET, limit=10)
    after = await reopen()  # the drain's process died; a new one starts on the same store
    clock.advance("7d")
    assert await after.claim(ClaimOptions(worker_id="w2", lease_ms=1_000)) == []
    assert await state_of(after, job_id) == "moving"
    [taken] = await after.transfer.reserve("drain-2", target=TARGET, limit=10)
    assert (taken.id, taken.state, taken.attempts) == (job_id, "queued", 1)
    assert [step.name for step in taken.steps] == ["first"]


async def test_reserve_takes_earlier_reservations_first_then_queued_runs_in_claim_order(
    driver: JobDriver, clock: FrozenClock
) -> None:
    low = await enqueue(driver, "low")
    high = await enqueue(driver, "high", priority=5)
    other_queue = await enqueue(driver, "mail", queue="mail")
    later = await enqueue(driver, "later", run_at_ms=clock.now_ms() + 1_000)
    [left_behind] = await driver.transfer.reserve(
        "crashed", target=TARGET, limit=1, queues=["default"]
    )
    assert left_behind.id == high
    batch = await driver.transfer.reserve("drain", target=TARGET, limit=2, queues=["default"])
    assert sorted(run.id for run in batch) == sorted([high, low])
    assert (await state_of(driver, later), await state_of(driver, other_queue)) == (
        "queued",
        "queued",
    )


async def test_an_import_is_faithful_and_a_second_import_of_the_run_changes_nothing(
    driver: JobDriver, other_driver: JobDriver, clock: FrozenClock
) -> None:
    job_id = await claim_one(driver, "k")
    step = StepRecord("provision", "run", {"org": "o1"}, clock.now_ms(), clock.now_ms() + 5)
    await driver.steps.record(job_id, step, worker_id="w")
    await driver.nack(
        job_id,
        NackOptions(
            "w", "retry", run_at_ms=clock.now_ms() + 60_000, error=JobError("X_JOB_FAILED", "e")
        ),
    )
    source = await driver.introspect.get_run(job_id)
    [moved] = await driver.transfer.reserve("drain", target=TARGET, limit=1)
    clock.advance("1m")
    [first] = await other_driver.transfer.import_runs([moved])
    [again] = await other_driver.transfer.import_runs([moved])
    assert first.outcome == "imported"
    assert (again.outcome, again.job_id) == ("present", first.job_id)
    copy = await other_driver.introspect.get_run(first.job_id)
    assert source is not None and copy is not None
    s, c = source.summary, copy.summary
    assert (c.state, c.attempts, c.max_attempts, c.run_at_ms, c.created_at_ms) == (
        "queued",
        1,
        3,
        s.run_at_ms,
        s.created_at_ms,
    )
    assert (c.name, c.queue, c.tenant, c.last_error) == (s.name, s.queue, s.tenant, s.last_error)
    assert (copy.payload, copy.idempotency_key, copy.actor, copy.concurrency_key) == (
        source.payload,
        source.idempotency_key,
        source.actor,
        source.concurrency_key,
    )
    assert [(x.name, x.kind, x.result) for x in copy.steps] == [("provision", "run", {"org": "o1"})]
    assert copy.locked_by is None
    assert len(await other_driver.introspect.list_runs(RunFilter())) == 1


async def test_an_import_keeps_a_dead_run_dead_with_its_error_and_end(
    driver: JobDriver, other_driver: JobDriver
) -> None:
    job_id = await claim_one(driver, "k")
    await driver.nack(job_id, NackOptions("w", "dead", error=JobError("X_JOB_FAILED", "gone")))
    source = await driver.introspect.get_run(job_id)
    [moved] = await driver.transfer.reserve("drain", target=TARGET, limit=1, include_dead=True)
    [result] = await other_driver.transfer.import_runs([moved])
    copy = await other_driver.introspect.get_run(result.job_id)
    assert source is not None and copy is not None
    assert (copy.summary.state, copy.summary.attempts, copy.summary.last_error) == (
        "dead",
        1,
        JobError("X_JOB_FAILED", "gone"),
    )
    assert copy.finished_at_ms == source.finished_at_ms
    await other_driver.introspect.retry_run(result.job_id)  # a dead letter stays retryable


async def test_a_key_the_target_gives_to_a_different_run_is_a_collision_and_nothing_changes(
    driver: JobDriver, other_driver: JobDriver, clock: FrozenClock
) -> None:
    await enqueue(driver, "shared")
    await enqueue(driver, "leaving")
    [moved, leaving] = await driver.transfer.reserve("drain", target=TARGET, limit=2)
    clock.advance("1s")
    theirs = await enqueue(other_driver, "shared")  # the same key, enqueued there later
    [result] = await other_driver.transfer.import_runs([moved])
    assert (result.outcome, result.job_id) == ("collision", theirs)
    run = await other_driver.introspect.get_run(theirs)
    assert run is not None and run.summary.created_at_ms == clock.now_ms()
    # A run that is itself moving off the target is never "the same run" either: that is
    # what a drain into its own source (under another name) would find.
    [self_import] = await driver.transfer.import_runs([leaving])
    assert (self_import.outcome, self_import.job_id) == ("collision", leaving.id)


async def test_a_remove_is_fenced_on_the_drain_that_holds_the_reservation(
    driver: JobDriver,
) -> None:
    reserved_id = await enqueue(driver, "reserved")
    await driver.transfer.reserve("drain-1", target=TARGET, limit=1)
    queued_id = await enqueue(driver, "queued")
    assert await driver.transfer.remove("drain-2", [reserved_id]) == []
    assert await driver.transfer.remove("drain-1", [queued_id, "999999", "not-an-id"]) == []
    assert await driver.transfer.remove("drain-1", [reserved_id]) == [reserved_id]
    assert await state_of(driver, reserved_id) is None
    assert await state_of(driver, queued_id) == "queued"
    again = await driver.enqueue(request("reserved"))
    assert not again.deduplicated, "the key left with its run"


async def test_a_release_puts_runs_back_as_they_were_and_is_fenced(driver: JobDriver) -> None:
    dead_id = await claim_one(driver, "dead")
    await driver.nack(dead_id, NackOptions("w", "dead", error=JobError("X_JOB_FAILED", "x")))
    queued_id = await enqueue(driver, "queued")
    await driver.transfer.reserve("drain", target=TARGET, limit=5, include_dead=True)
    assert await driver.transfer.release("other", [queued_id, dead_id]) == []
    assert sorted(await driver.transfer.release("drain", [queued_id, dead_id])) == sorted(
        [queued_id, dead_id]
    )
    assert (await state_of(driver, queued_id), await state_of(driver, dead_id)) == (
        "queued",
        "dead",
    )
    [claimed] = await driver.claim(ClaimOptions(worker_id="w", lease_ms=1_000))
    assert claimed.id == queued_id


async def test_a_moved_retrying_run_replays_its_completed_steps_on_the_target(
    driver: JobDriver, other_driver: JobDriver, clock: FrozenClock
) -> None:
    """The step is the retry unit on the new store too: the move carries what ran."""
    mail.fail_once("welcome")
    source = Harness(driver=driver, clock=clock)
    with source.installed():
        await onboard_org.enqueue({"org_id": "org-1"})
    worker = JobWorker(driver=driver, worker_id="source-worker", concurrency=1)
    assert await worker.run_due() == 1  # provisions, then the welcome mail fails
    report = await move_runs(driver, other_driver, drain_id="drain", batch=10)
    assert report.total().removed == 1
    assert await driver.introspect.list_runs(RunFilter()) == []
    trace = await Harness(driver=other_driver, clock=clock).drain()
    assert trace.steps["provision"].executions == 0, "replayed from the moved steps"
    assert trace.steps["welcome-email"].executions == 1
    [run] = trace.enqueued(onboard_org)
    assert (run.state, run.attempts) == ("sleeping", 1)


async def test_moved_runs_carry_every_field_a_faithful_move_needs(
    driver: JobDriver, other_driver: JobDriver, clock: FrozenClock
) -> None:
    await enqueue(
        driver,
        "full",
        tenant="acme",
        actor="user-7",
        concurrency_key="transfer.job:acct-1",
        priority=3,
        max_attempts=9,
        run_at_ms=clock.now_ms() + 5_000,
    )
    [moved] = await driver.transfer.reserve("drain", target=TARGET, limit=1)
    assert isinstance(moved, MovedRun) and moved.priority == 3
    [result] = await other_driver.transfer.import_runs([moved])
    claim = ClaimOptions(worker_id="w", lease_ms=1_000)
    assert await other_driver.claim(claim) == [], "still delayed: run_at moved with it"
    clock.advance(5_000)
    [claimed] = await other_driver.claim(claim)
    assert claimed.id == result.job_id
    assert (
        claimed.tenant,
        claimed.actor,
        claimed.concurrency_key,
        claimed.max_attempts,
        claimed.attempt,
    ) == ("acme", "user-7", "transfer.job:acct-1", 9, 1)


async def test_a_moved_run_keeps_its_rate_key(
    driver: JobDriver, other_driver: JobDriver, clock: FrozenClock
) -> None:
    """A run of a rated job waits for its key's window on the target too: the key moves
    with it (a run without one stays without)."""
    rated = await enqueue(driver, "rated", rate_key="transfer.job:acct-1")
    plain = await enqueue(driver, "plain")
    moved = await driver.transfer.reserve("drain", target=TARGET, limit=2)
    assert {m.id: m.rate_key for m in moved} == {rated: "transfer.job:acct-1", plain: None}
    results = await other_driver.transfer.import_runs(moved)
    copies = [await other_driver.introspect.get_run(r.job_id) for r in results]
    assert sorted((c.idempotency_key, c.rate_key) for c in copies if c is not None) == [
        ("plain", None),
        ("rated", "transfer.job:acct-1"),
    ]


async def test_a_drain_stops_at_a_batch_in_which_every_run_collides_and_puts_them_back(
    driver: JobDriver, other_driver: JobDriver, clock: FrozenClock
) -> None:
    for key in ("k1", "k2", "k3"):
        await enqueue(driver, key)
    clock.advance("1s")
    for key in ("k1", "k2", "k3"):
        await enqueue(other_driver, key)  # the target already holds every key
    report = await move_runs(driver, other_driver, drain_id="drain", batch=2)
    assert report.stopped == "collisions"
    assert [(b.reserved, b.collisions, b.removed) for b in report.batches] == [(2, 2, 0)]
    assert report.released == 2
    assert [run.state for run in await driver.introspect.list_runs(RunFilter())] == ["queued"] * 3


class Target:
    """A target as a drain sees it (its location and its ``import_runs``), named alike for
    every drain of a test; with ``thief``, another drain to the same target takes over
    every run the source has reserved for it each time a drain imports (and never
    finishes them itself)."""

    def __init__(self, target: JobDriver, source: JobDriver, *, thief: bool = False) -> None:
        self._target = target
        self._source = source
        self._thief = thief
        self.location = target.location or "process-local:the-target"
        self.transfer = self

    async def import_runs(self, runs: list[MovedRun]) -> list[ImportResult]:
        if self._thief:
            await self._source.transfer.reserve("thief", target=self.location, limit=100)
        return list(await self._target.transfer.import_runs(runs))


async def keys_of(driver: JobDriver) -> dict[str, str]:
    """Every run of ``driver`` as idempotency key -> state."""
    found = {}
    for run in await driver.introspect.list_runs(RunFilter()):
        detail = await driver.introspect.get_run(run.id)
        assert detail is not None
        found[detail.idempotency_key] = run.state
    return found


async def test_a_drain_whose_runs_another_drain_takes_over_stops_and_a_rerun_finishes(
    driver: JobDriver, other_driver: JobDriver, clock: FrozenClock
) -> None:
    await enqueue(driver, "clash")
    await enqueue(driver, "fresh")
    clock.advance("1s")
    await enqueue(other_driver, "clash")
    contended = cast(JobDriver, Target(other_driver, driver, thief=True))
    report = await move_runs(driver, contended, drain_id="drain", batch=10)
    assert report.stopped == "contended"
    [batch] = report.batches
    assert (batch.imported, batch.collisions, batch.removed, batch.taken_over) == (1, 1, 0, 1)
    assert report.released == 0, "the other drain holds the clash now"
    assert await keys_of(driver) == {"clash": "moving", "fresh": "moving"}, "nothing lost"
    plain = cast(JobDriver, Target(other_driver, driver))
    rerun = await move_runs(driver, plain, drain_id="rerun", batch=10)
    assert (rerun.total().present, rerun.total().removed, rerun.released) == (1, 1, 1)
    assert await keys_of(driver) == {"clash": "queued"}
    assert await keys_of(other_driver) == {"clash": "queued", "fresh": "queued"}
