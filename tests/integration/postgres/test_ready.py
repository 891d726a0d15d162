"""The ready set on Postgres (migration 0029): rotation by TRUNCATE, a rotation held back by
a reader, runs due later promoted, stale rows dropped, lapsed leases rescued; the runs made
claimable outside the ready-writing statements (migration 0030's trigger): a drain's
release, a parent woken by its last child."""

from __future__ import annotations

import json
import logging

import asyncpg
import pytest
from support.plans import plan_nodes
from support.runs import send

from ferry._clock import FrozenClock
from ferry.drivers import PostgresJobDriver
from ferry.drivers._postgres.queries import READY_LOOKAHEAD_MS, Queries
from ferry.drivers._postgres.ready import MOVE_BATCH, ROTATE_AFTER_DEAD, TEND_EVERY_MS
from ferry.drivers.protocol import AckOptions, ClaimOptions, NackOptions, RunFence


async def _rows(db: asyncpg.Connection, schema: str, table: str) -> int:
    count: int = await db.fetchval(f'SELECT count(*) FROM "{schema}".{table}')
    return count


async def _switch(db: asyncpg.Connection, schema: str, clock: FrozenClock) -> int:
    """Switch the rotation as a tending turn does once the current partition's dead rows
    call for it (their count comes from the server's statistics, which lag): answers the
    partition now retiring."""
    current = await db.fetchval(f'SELECT current_part FROM "{schema}".ready_rotation')
    retiring: int = await db.fetchval(Queries(schema)["ready_switch"], clock.now_ms(), current)
    return retiring


def _next_turn(clock: FrozenClock) -> None:
    clock.set(clock.now_ms() + TEND_EVERY_MS)


async def test_a_rotation_truncates_the_retired_partition_and_keeps_its_ready_runs(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, clock: FrozenClock
) -> None:
    await driver.enqueue_many([send(f"old-{i}", priority=i % 3) for i in range(30)])
    first = await driver.claim(ClaimOptions("w", 30_000, limit=10))
    assert await driver.settle_many([(c.id, AckOptions("w")) for c in first]) == [True] * 10
    assert await _switch(db, pg_schema, clock) == 0
    await driver.enqueue_many([send(f"new-{i}") for i in range(5)])
    assert await _rows(db, pg_schema, "ready_1") == 5, "new rows go to the current partition"
    before = await db.fetchval(f"SELECT pg_relation_filenode('\"{pg_schema}\".ready_0')")

    _next_turn(clock)
    claimed = await driver.claim(ClaimOptions("w", 30_000, limit=1))

    assert await _rows(db, pg_schema, "ready_0") == 0
    after = await db.fetchval(f"SELECT pg_relation_filenode('\"{pg_schema}\".ready_0')")
    assert after != before, "truncated: a new, empty file, whatever the xmin horizon"
    rotation = await db.fetchrow(f'SELECT * FROM "{pg_schema}".ready_rotation')
    assert (rotation["current_part"], rotation["retiring_part"]) == (1, None)
    rest = await driver.claim(ClaimOptions("w", 30_000, limit=100))
    keys = [c.idempotency_key for c in claimed + rest]
    expected = await db.fetch(
        f"""SELECT idempotency_key FROM "{pg_schema}".jobs WHERE state = 'running'
            ORDER BY priority DESC, run_at_ms, id"""
    )
    assert len(keys) == 25 and keys == [r["idempotency_key"] for r in expected], (
        "every run still ready, in claim order across the rotation"
    )


async def test_a_reader_of_the_retiring_partition_delays_the_truncation_never_the_claims(
    driver: PostgresJobDriver,
    db: asyncpg.Connection,
    pg_schema: str,
    clock: FrozenClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await driver.enqueue_many([send(f"run-{i}") for i in range(6)])
    assert len(await driver.claim(ClaimOptions("w", 30_000, limit=2))) == 2
    assert await _switch(db, pg_schema, clock) == 0
    reader = db.transaction(isolation="repeatable_read")
    await reader.start()
    await db.fetchval(f'SELECT count(*) FROM "{pg_schema}".ready_0')  # holds ready_0

    _next_turn(clock)
    with caplog.at_level(logging.WARNING, logger="ferry.drivers.postgres"):
        claimed = await driver.claim(ClaimOptions("w", 30_000, limit=2))
    assert len(claimed) == 2, "the claim went ahead"
    assert [r.message for r in caplog.records] == ["jobs.ready.rotation-held"]
    assert caplog.records[0].__dict__["partition"] == "ready_0"
    rotation = await db.fetchrow(f'SELECT * FROM "{pg_schema}".ready_rotation')
    assert rotation["retiring_part"] == 0, "not truncated while held"

    await reader.rollback()
    _next_turn(clock)
    assert len(await driver.claim(ClaimOptions("w", 30_000, limit=10))) == 2
    rotation = await db.fetchrow(f'SELECT * FROM "{pg_schema}".ready_rotation')
    assert rotation["retiring_part"] is None, "truncated once released"


async def test_a_rotation_moves_its_rows_by_ctid_never_by_a_join(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, clock: FrozenClock
) -> None:
    # A partition retires with ROTATE_AFTER_DEAD dead rows at least; this one never analyzed.
    await driver.enqueue_many([send(f"run-{i}") for i in range(ROTATE_AFTER_DEAD)])
    assert await _switch(db, pg_schema, clock) == 0
    move = Queries(pg_schema)["ready_move"]

    plan = json.loads(
        await db.fetchval(f"EXPLAIN (FORMAT JSON) {move}", 0, clock.now_ms(), MOVE_BATCH)
    )

    nodes = plan_nodes(plan[0]["Plan"])
    [moved_out] = [n for n in nodes if n.get("Subplan Name") == "CTE moved_out"]
    kinds = [(n["Node Type"], n.get("Relation Name")) for n in plan_nodes(moved_out)]
    assert ("Tid Scan", "ready_0") in kinds
    joins = [kind for kind, _ in kinds if kind in ("Nested Loop", "Hash Join", "Merge Join")]
    assert joins == [], "a join back to the locked rows is a nested loop without statistics"


async def test_a_run_due_after_the_lookahead_waits_apart_and_is_ready_before_it_falls_due(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, clock: FrozenClock
) -> None:
    later = clock.now_ms() + 10 * READY_LOOKAHEAD_MS
    await driver.enqueue(send("later", run_at_ms=later))
    assert await _rows(db, pg_schema, "ready_later") == 1
    assert await _rows(db, pg_schema, "ready_0") + await _rows(db, pg_schema, "ready_1") == 0

    clock.set(later - READY_LOOKAHEAD_MS)
    assert await driver.claim(ClaimOptions("w", 30_000, limit=1)) == [], "not due yet"
    assert await _rows(db, pg_schema, "ready_later") == 0, "promoted within the lookahead"
    clock.set(later)
    [claimed] = await driver.claim(ClaimOptions("w", 30_000, limit=1))
    assert claimed.idempotency_key == "later"


async def test_stale_rows_ahead_in_claim_order_do_not_shorten_the_batch(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, clock: FrozenClock
) -> None:
    written = await driver.enqueue_many(
        [send(f"gone-{i}", priority=9) for i in range(25)] + [send(f"live-{i}") for i in range(5)]
    )
    for run in written[:25]:
        assert await driver.introspect.cancel_run(run.job_id) == "cancelled"
    assert await _rows(db, pg_schema, "ready") == 30, "a cancel leaves its row behind"

    claimed = await driver.claim(ClaimOptions("w", 30_000, limit=5))

    assert [c.idempotency_key for c in claimed] == [f"live-{i}" for i in range(5)]
    assert await _rows(db, pg_schema, "ready") == 0, "the claims dropped the stale rows"


async def test_a_lapsed_lease_is_back_in_the_queue_at_the_next_turn(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, clock: FrozenClock
) -> None:
    await driver.enqueue(send("crashed"))
    [first] = await driver.claim(ClaimOptions("dead-worker", 1_000, limit=1))
    clock.set(first.lease_expires_at_ms)

    [again] = await driver.claim(ClaimOptions("w", 30_000, limit=1))

    assert (again.id, again.attempt) == (first.id, 2)
    state = await db.fetchval(f'SELECT state FROM "{pg_schema}".jobs WHERE id = $1', int(first.id))
    assert state == "running"


async def test_a_released_run_is_ready_again_at_its_instant(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, clock: FrozenClock
) -> None:
    later = clock.now_ms() + 10 * READY_LOOKAHEAD_MS
    written = await driver.enqueue_many([send("now"), send("later", run_at_ms=later)])
    ids = [run.job_id for run in written]
    assert len(await driver.transfer.reserve("drain", target="elsewhere", limit=2)) == 2
    assert await _rows(db, pg_schema, "ready") == 0, "a reserved run leaves the set"

    assert sorted(await driver.transfer.release("drain", ids)) == sorted(ids)

    rows = await db.fetch(f'SELECT part, id::text FROM "{pg_schema}".ready ORDER BY part')
    assert [(r["part"], r["id"]) for r in rows] == [(0, ids[0]), (2, ids[1])], (
        "due now: where claims look; due after the lookahead: apart"
    )
    claimed = await driver.claim(ClaimOptions("w", 30_000, limit=2))
    assert [c.idempotency_key for c in claimed] == ["now"]


async def test_a_parent_whose_last_child_ends_long_after_its_park_is_claimable_at_once(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, clock: FrozenClock
) -> None:
    """The wake moves the parent's instant in place (migration 0023's trigger), from the
    child's statement: its row goes where claims look, however long ago it parked."""
    parent = (await driver.enqueue(send("parent"))).job_id
    assert [c.id for c in await driver.claim(ClaimOptions("w1", 30_000, limit=1))] == [parent]
    children = await driver.children.enqueue_children(RunFence(parent, "w1"), [send("child")])
    assert not isinstance(children, str), children
    assert await _rows(db, pg_schema, "ready_0") == 1, "a child written is ready"
    assert await driver.children.await_children(RunFence(parent, "w1"))
    day = 86_400_000
    assert await driver.nack(parent, NackOptions("w1", "sleep", clock.now_ms() + day))
    assert await _rows(db, pg_schema, "ready_later") == 1, "parked until its deadline"
    long_lease = 100 * READY_LOOKAHEAD_MS
    [child] = await driver.claim(ClaimOptions("w2", long_lease, limit=1))
    clock.set(clock.now_ms() + 10 * READY_LOOKAHEAD_MS)
    assert await driver.claim(ClaimOptions("w3", 30_000, limit=1)) == [], "this turn tended"

    assert await driver.ack(child.id, AckOptions("w2"))

    [resumed] = await driver.claim(ClaimOptions("w1", 30_000, limit=1))
    assert (resumed.id, resumed.attempt) == (parent, 1), "no promotion needed: a turn away"


async def test_a_parent_whose_last_child_is_deleted_long_after_its_park_is_claimable_at_once(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, clock: FrozenClock
) -> None:
    """The delete's trigger (migration 0031) wakes the parent as a child's end does: in
    place, from the latest instant the two rows hold (a delete writes none of the driver's
    clock), and its ready row goes where claims look."""
    parent = (await driver.enqueue(send("parent"))).job_id
    assert [c.id for c in await driver.claim(ClaimOptions("w1", 30_000, limit=1))] == [parent]
    children = await driver.children.enqueue_children(RunFence(parent, "w1"), [send("child")])
    assert not isinstance(children, str), children
    [child] = children
    assert await driver.children.await_children(RunFence(parent, "w1"))
    clock.set(clock.now_ms() + 1_000)
    parked_at = clock.now_ms()
    day = 86_400_000
    assert await driver.nack(parent, NackOptions("w1", "sleep", parked_at + day))
    assert await _rows(db, pg_schema, "ready_later") == 1, "parked until its deadline"
    clock.set(clock.now_ms() + 10 * READY_LOOKAHEAD_MS)

    [change] = await driver.introspect.delete_runs([child.job_id])
    assert change.changed

    detail = await driver.introspect.get_run(parent)
    assert detail is not None
    assert (detail.children_pending, detail.summary.run_at_ms) == (0, parked_at)
    [resumed] = await driver.claim(ClaimOptions("w1", 30_000, limit=1))
    assert (resumed.id, resumed.attempt) == (parent, 1)
