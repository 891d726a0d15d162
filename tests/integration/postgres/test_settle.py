"""Settles on Postgres: fenced on the claimer, attempts given back or kept, slots freed."""

from __future__ import annotations

import asyncio
import json

import asyncpg
from support.plans import read_through, scans_of
from support.runs import send

from ferry._clock import FrozenClock
from ferry.drivers import PostgresJobDriver
from ferry.drivers._columns import json_text
from ferry.drivers._postgres.driver import _settle_row
from ferry.drivers._postgres.queries import Queries
from ferry.drivers.protocol import (
    AckOptions,
    ClaimOptions,
    HeartbeatOptions,
    JobError,
    NackOptions,
    Progress,
    StepRecord,
)


async def test_a_worker_whose_lease_was_taken_over_settles_nothing(
    driver: PostgresJobDriver, clock: FrozenClock
) -> None:
    await driver.enqueue(send("contested"))
    [stale] = await driver.claim(ClaimOptions("slow", lease_ms=1_000))
    clock.advance("1s")
    [fresh] = await driver.claim(ClaimOptions("fast", lease_ms=30_000))
    assert fresh.id == stale.id

    step = StepRecord("late-step", "run", 1, clock.now_ms(), clock.now_ms())
    assert not await driver.ack(stale.id, AckOptions("slow", result="stale"))
    assert not await driver.nack(stale.id, NackOptions("slow", "dead"))
    assert not await driver.heartbeat(stale.id, HeartbeatOptions("slow", 30_000))
    assert not await driver.steps.record(stale.id, step, worker_id="slow")

    run = await driver.introspect.get_run(fresh.id)
    assert run is not None
    assert (run.summary.state, run.locked_by, run.summary.attempts) == ("running", "fast", 2)
    assert run.result is None and run.steps == ()
    assert await driver.ack(fresh.id, AckOptions("fast", result="done"))


async def test_a_lapsed_lease_cannot_settle_even_before_anyone_takes_it_over(
    driver: PostgresJobDriver, clock: FrozenClock
) -> None:
    await driver.enqueue(send("lapsed"))
    [held] = await driver.claim(ClaimOptions("w", lease_ms=1_000))
    clock.advance("1s")
    assert not await driver.ack(held.id, AckOptions("w"))


async def test_a_heartbeat_extends_the_lease_from_now(
    driver: PostgresJobDriver, clock: FrozenClock
) -> None:
    await driver.enqueue(send("long"))
    [held] = await driver.claim(ClaimOptions("w", lease_ms=1_000))
    clock.advance("900ms")
    assert await driver.heartbeat(held.id, HeartbeatOptions("w", 1_000, Progress(1, 4)))
    clock.advance("900ms")
    assert await driver.claim(ClaimOptions("other", lease_ms=1_000)) == []
    run = await driver.introspect.get_run(held.id)
    assert run is not None
    assert run.lease_expires_at_ms == clock.now_ms() + 100
    assert run.progress == Progress(1, 4)
    assert await driver.ack(held.id, AckOptions("w"))


async def test_settle_many_lands_each_settle_on_its_own_fence(
    driver: PostgresJobDriver, clock: FrozenClock
) -> None:
    await driver.enqueue_many([send(k) for k in ("done", "retry", "drained", "theirs")])
    claimed = {c.idempotency_key: c for c in await driver.claim(ClaimOptions("w", 30_000, 3))}
    [theirs] = await driver.claim(ClaimOptions("other", 30_000))
    error = JobError("X_JOB_FAILED", "boom")
    landed = await driver.settle_many(
        [
            (claimed["done"].id, AckOptions("w", result={"ok": True})),
            (claimed["retry"].id, NackOptions("w", "retry", clock.now_ms() + 5_000, error)),
            (claimed["drained"].id, NackOptions("w", "interrupted")),
            (theirs.id, AckOptions("w")),
            (claimed["done"].id, AckOptions("w")),
            ("no-such-run", AckOptions("w")),
        ]
    )
    assert landed == [True, True, True, False, False, False]

    done = await driver.introspect.get_run(claimed["done"].id)
    retried = await driver.introspect.get_run(claimed["retry"].id)
    drained = await driver.introspect.get_run(claimed["drained"].id)
    untouched = await driver.introspect.get_run(theirs.id)
    assert done is not None and retried is not None and drained is not None
    assert untouched is not None
    assert (done.summary.state, done.result, done.finished_at_ms) == (
        "completed",
        {"ok": True},
        clock.now_ms(),
    )
    assert (retried.summary.state, retried.summary.attempts) == ("queued", 1)
    assert retried.summary.last_error == error
    assert retried.summary.run_at_ms == clock.now_ms() + 5_000
    assert (drained.summary.state, drained.summary.attempts) == ("queued", 0)
    assert (untouched.summary.state, untouched.locked_by) == ("running", "other")


async def test_the_settle_that_ends_a_run_frees_its_concurrency_slot(
    driver: PostgresJobDriver,
) -> None:
    await driver.enqueue_many(
        [send("first", concurrency_key="acct:1"), send("second", concurrency_key="acct:1")]
    )
    first, second = await driver.claim(ClaimOptions("w", 30_000, limit=2))
    assert await driver.slots.acquire("acct:1", holder=first.id, limit=1, ttl_ms=30_000)
    assert not await driver.slots.acquire("acct:1", holder=second.id, limit=1, ttl_ms=30_000)
    assert await driver.ack(first.id, AckOptions("w"))
    assert await driver.slots.holders("acct:1") == []
    assert await driver.slots.acquire("acct:1", holder=second.id, limit=1, ttl_ms=30_000)
    assert await driver.nack(second.id, NackOptions("w", "deferred"))
    assert await driver.slots.holders("acct:1") == []


async def test_a_heartbeat_keeps_the_runs_concurrency_slot(
    driver: PostgresJobDriver, clock: FrozenClock
) -> None:
    await driver.enqueue(send("slow", concurrency_key="acct:2"))
    [held] = await driver.claim(ClaimOptions("w", 1_000))
    assert await driver.slots.acquire("acct:2", holder=held.id, limit=1, ttl_ms=1_000)
    clock.advance("900ms")
    assert await driver.heartbeat(held.id, HeartbeatOptions("w", 1_000))
    clock.advance("900ms")
    assert await driver.slots.holders("acct:2") == [held.id]


async def test_uncounted_settles_give_the_attempt_back(driver: PostgresJobDriver) -> None:
    await driver.enqueue(send("patient"))
    attempts = []
    for outcome in ("interrupted", "deferred", "sleep", "retry"):
        [held] = await driver.claim(ClaimOptions("w", 30_000))
        attempts.append(held.attempt)
        assert await driver.nack(held.id, NackOptions("w", outcome))
    [held] = await driver.claim(ClaimOptions("w", 30_000))
    attempts.append(held.attempt)
    assert attempts == [1, 1, 1, 1, 2]


async def test_a_renewal_skips_a_row_another_session_holds_locked_and_renews_the_rest(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str
) -> None:
    await driver.enqueue_many([send("locked"), send("free")])
    locked, free = await driver.claim(ClaimOptions("w", lease_ms=30_000, limit=2))
    async with db.transaction():
        await db.execute(
            f'SELECT 1 FROM "{pg_schema}".jobs WHERE id = $1 FOR UPDATE', int(locked.id)
        )
        # One batched statement renews every lease of a worker: a row stuck behind another
        # session's lock does not land this time, and does not stall the others.
        answers = await asyncio.wait_for(
            driver.heartbeat_many(
                [
                    (locked.id, HeartbeatOptions("w", 60_000)),
                    (free.id, HeartbeatOptions("w", 60_000)),
                ]
            ),
            10,
        )
    assert [a.landed for a in answers] == [False, True]
    assert await driver.heartbeat(locked.id, HeartbeatOptions("w", 60_000)), "the next one lands"


async def test_a_settle_and_a_renewal_read_the_runs_they_fence_by_primary_key(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, clock: FrozenClock
) -> None:
    # A backlog analyzed while nothing ran: the statistics say no run is running, so a
    # fence on state alone looks like one row found by reading the table. A settle of one
    # run must cost the same on 5,000 runs as on 5 million (it once read every row).
    await driver.enqueue_many([send(f"backlog-{i}") for i in range(5_000)])
    await db.execute(f'ANALYZE "{pg_schema}".jobs')
    [held] = await driver.claim(ClaimOptions("w", 30_000))
    now = clock.now_ms()
    queries = Queries(pg_schema)
    batch = json_text([_settle_row(int(held.id), AckOptions("w"), now)])
    error = ("X_CANCELLED", "cancelled")
    settle = (batch, now, *error, None, 0, None, None, None)
    renewal = ([int(held.id)], ["w"], [now + 30_000], [None], [None], now, None, None, None, None)
    for statement, args in (("settle_and_claim", settle), ("heartbeat", renewal)):
        plan = json.loads(await db.fetchval(f"EXPLAIN (FORMAT JSON) {queries[statement]}", *args))
        on_jobs = scans_of(plan, "jobs")
        assert read_through(on_jobs, "jobs_pkey"), (statement, on_jobs)
