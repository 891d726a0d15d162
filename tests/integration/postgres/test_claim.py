"""Claim on Postgres: order, takeover of lapsed leases, and a cost that ignores history."""

from __future__ import annotations

import json

import asyncpg
from support.plans import read_through, scans_of
from support.runs import send

from ferry._clock import FrozenClock
from ferry.drivers import PostgresJobDriver
from ferry.drivers._postgres.queries import Queries
from ferry.drivers.protocol import ClaimOptions, JobError, NackOptions


async def test_claims_higher_priority_first_then_earlier_run_at(
    driver: PostgresJobDriver, clock: FrozenClock
) -> None:
    now = clock.now_ms()
    await driver.enqueue_many(
        [
            send("low-early", priority=0, run_at_ms=now - 2_000),
            send("high-late", priority=5, run_at_ms=now - 1_000),
            send("high-early", priority=5, run_at_ms=now - 2_000),
            send("urgent-but-not-due", priority=9, run_at_ms=now + 1_000),
            send("low-late", priority=0, run_at_ms=now),
        ]
    )
    claimed = await driver.claim(ClaimOptions("w", lease_ms=30_000, limit=10))
    assert [c.idempotency_key for c in claimed] == [
        "high-early",
        "high-late",
        "low-early",
        "low-late",
    ]


async def test_a_retried_run_is_not_starved_by_runs_enqueued_after_it_became_due(
    driver: PostgresJobDriver, clock: FrozenClock
) -> None:
    await driver.enqueue(send("flaky"))
    [first] = await driver.claim(ClaimOptions("w", lease_ms=30_000))
    retry_at = clock.now_ms() + 1_000
    error = JobError("X_JOB_FAILED", "boom")
    assert await driver.nack(first.id, NackOptions("w", "retry", retry_at, error))
    clock.set(retry_at)
    await driver.enqueue_many([send(f"flood-{i}") for i in range(50)])
    [again] = await driver.claim(ClaimOptions("w", lease_ms=30_000))
    assert again.id == first.id
    assert again.attempt == 2


async def test_a_lapsed_lease_is_taken_over_by_the_next_claim(
    driver: PostgresJobDriver, clock: FrozenClock
) -> None:
    await driver.enqueue(send("crashy"))
    [held] = await driver.claim(ClaimOptions("dead-worker", lease_ms=1_000))
    assert await driver.claim(ClaimOptions("other", lease_ms=1_000)) == []
    clock.advance("1s")
    [taken] = await driver.claim(ClaimOptions("other", lease_ms=1_000))
    assert taken.id == held.id
    assert taken.attempt == 2  # the crashed attempt counts
    run = await driver.introspect.get_run(taken.id)
    assert run is not None and run.locked_by == "other"


async def test_claim_skips_paused_queues_and_other_names(driver: PostgresJobDriver) -> None:
    await driver.enqueue_many(
        [send("mail", queue="mail"), send("sms", queue="sms"), send("other", name="other")]
    )
    await driver.introspect.pause_queue("mail")
    claimed = await driver.claim(ClaimOptions("w", lease_ms=30_000, limit=10, names=["send"]))
    assert [c.idempotency_key for c in claimed] == ["sms"]
    await driver.introspect.resume_queue("mail")
    claimed = await driver.claim(ClaimOptions("w", lease_ms=30_000, limit=10, queues=["mail"]))
    assert [c.idempotency_key for c in claimed] == ["mail"]


async def test_the_claim_walks_the_ready_set_and_reads_runs_by_primary_key_only(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, clock: FrozenClock
) -> None:
    now = clock.now_ms()
    await db.execute(
        f"""
        INSERT INTO "{pg_schema}".jobs (name, queue, payload, idempotency_key, state,
            attempts, max_attempts, run_at_ms, created_at_ms, updated_at_ms, finished_at_ms)
        SELECT 'send', 'default', '{{}}', 'done-' || n, 'completed', 1, 3, $1, $1, $1, $1
        FROM generate_series(1, 20000) AS n
        """,
        now - 60_000,
    )
    await driver.enqueue_many([send(f"live-{i}") for i in range(5_000)])
    await db.execute(f'ANALYZE "{pg_schema}".jobs')
    claim = Queries(pg_schema)["settle_and_claim"]
    nothing_to_settle = "[]"
    error = ("X_CANCELLED", "cancelled")
    args = (nothing_to_settle, now, *error, "w", 10, now + 30_000, None, None)
    plan = json.loads(await db.fetchval(f"EXPLAIN (FORMAT JSON) {claim}", *args))
    on_ready = scans_of(plan, "ready_0")
    assert ("Index Scan", "ready_0_priority_run_at_ms_id_idx") in on_ready
    assert ("Seq Scan", None) not in on_ready, "picked rows are deleted by their ctid"
    on_jobs = scans_of(plan, "jobs")
    assert read_through(on_jobs, "jobs_pkey"), on_jobs


async def test_a_batch_comes_back_in_claim_order_past_single_digit_ids(
    driver: PostgresJobDriver,
) -> None:
    results = await driver.enqueue_many([send(f"run-{i}") for i in range(12)])
    claimed = await driver.claim(ClaimOptions("w", lease_ms=30_000, limit=12))
    assert [c.id for c in claimed] == [r.job_id for r in results]
