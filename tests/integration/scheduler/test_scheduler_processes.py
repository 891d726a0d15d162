"""Two ``ferry scheduler`` processes against one database: one leader, a warm standby.

Real processes, the real clock, a 0.2 s tick and a lease of a few seconds. Every wait is a
bounded poll for a condition; the bound is a guard, never the assertion. No test waits for
a wall-clock minute: an overdue occurrence is made by seeding the task's last-tick row.
"""

from __future__ import annotations

import asyncio
import signal
import time
from typing import Any

import asyncpg
from support.processes import SCHEDULER_TICK_S, FerryProcess, Fleet
from support.waiting import eventually

from ferry.drivers import PostgresJobDriver
from ferry.tasks import occurrences

MINUTE_MS = 60_000
YEAR_MS = 366 * 24 * 3_600_000


def now_ms() -> int:
    return time.time_ns() // 1_000_000


async def leader_row(db: asyncpg.Connection, schema: str) -> Any:
    return await db.fetchrow(
        f'SELECT holder, acquired_at_ms, expires_at_ms FROM "{schema}".leases '
        "WHERE name = 'scheduler' AND expires_at_ms > 0"
    )


async def fired_occurrences(
    db: asyncpg.Connection, schema: str, task: str = "every_minute"
) -> list[int]:
    """The occurrence of every queued ``record_minute`` run, from its payload (every one
    enqueued by ``task``)."""
    rows = await db.fetch(
        f"SELECT (payload->>'occurrence_ms')::bigint AS occurrence, idempotency_key "
        f'FROM "{schema}".jobs WHERE name = $1',
        "record_minute",
    )
    for row in rows:
        assert row["idempotency_key"].startswith(f"{task}:{row['occurrence']}:")
    return sorted(row["occurrence"] for row in rows)


def dispatched(node: FerryProcess) -> list[int]:
    """The occurrences ``node`` dispatched, in order (from its JSON log)."""
    return [int(e["occurrence_ms"]) for e in node.events("jobs.scheduler.dispatched")]


async def held_by(fleet: Fleet, db: asyncpg.Connection, schema: str, node: FerryProcess) -> Any:
    row = await leader_row(db, schema)
    return row if row is not None and fleet.by_holder(row["holder"]) is node else None


async def rounds_pass(db: asyncpg.Connection, schema: str, count: int) -> None:
    """Wait until the leader has renewed ``count`` more times (every node runs a round a tick)."""
    first = await leader_row(db, schema)

    async def renewed() -> bool:
        row = await leader_row(db, schema)
        return row["expires_at_ms"] >= first["expires_at_ms"] + count * SCHEDULER_TICK_S * 1000

    await eventually(renewed, within_s=count * SCHEDULER_TICK_S + 10, what=f"{count} more rounds")


async def test_of_two_scheduler_processes_exactly_one_dispatches(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, fleet: Fleet
) -> None:
    """Both start together with three minutes overdue (the state a stopped scheduler leaves):
    the lease holder fires each overdue occurrence once, the standby fires nothing — and
    their ``/metrics`` say which is which."""
    start = now_ms()
    checked_through = start - start % MINUTE_MS - 3 * MINUTE_MS
    await db.execute(
        f'INSERT INTO "{pg_schema}".records (space, key, value, updated_at_ms) '
        "VALUES ('scheduler-ticks', $1, jsonb_build_array($2::bigint, null, null), 0)",
        "every_minute",
        checked_through,
    )
    await asyncio.gather(*(fleet.scheduler(lease_seconds=4) for _ in range(2)))

    async def three_fired() -> bool:
        return len(await fired_occurrences(db, pg_schema)) >= 3

    await eventually(three_fired, within_s=30, what="the overdue occurrences to fire")
    await rounds_pass(db, pg_schema, 5)
    row = await leader_row(db, pg_schema)
    leader = fleet.by_holder(row["holder"])
    (standby,) = (node for node in fleet.spawned if node is not leader)
    assert dispatched(standby) == []
    assert standby.events("jobs.scheduler.leadership-acquired") == []
    fired = await fired_occurrences(db, pg_schema)
    assert dispatched(leader) == fired
    assert fired[:3] == [checked_through + n * MINUTE_MS for n in (1, 2, 3)]
    assert await leader.metric("job_scheduler_leader") == 1.0
    assert await standby.metric("job_scheduler_leader") == 0.0
    dispatches = "job_scheduler_dispatches_total"
    assert (await leader.metric(dispatches, task="every_minute") or 0) >= 3
    assert await standby.metric(dispatches, task="every_minute") == 0.0


async def test_an_occurrence_due_under_a_killed_leaders_lease_fires_once_late_on_the_standby(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, fleet: Fleet
) -> None:
    """Budget: one kill -9 of the leader; lease 4 s, tick 0.2 s. Invariant: an occurrence
    that comes due while a dead node still holds the lease is fired exactly once — by the
    standby, late, never by the dead node and never twice — and the standby takes the row
    only once the dead lease has expired, within TTL + one tick (plus scheduling slack).

    The occurrence comes due by a seeded row, not by the wall clock: the app's one task fires
    at New Year only, and once the leader is dead the test moves that task's last-tick row to
    just before the latest New Year — what the row says when an occurrence passes while
    nobody live leads."""
    lease_s = 4.0
    app = "scheduler.new_year_app"
    old = await fleet.scheduler(lease_seconds=lease_s, app=app)
    await eventually(lambda: held_by(fleet, db, pg_schema, old), within_s=10, what="first leader")

    async def first_sight() -> Any:
        return await db.fetchrow(
            "SELECT (value->>0)::bigint AS checked_through_ms "
            f"FROM \"{pg_schema}\".records WHERE space = 'scheduler-ticks' AND key = $1",
            "new_year",
        )

    # Once the task's row exists the old node has nothing left to write to it: its next
    # occurrence is months away. Nothing it sent before the kill can land after the seed.
    seen = await eventually(first_sight, what="the task's first last-tick row")
    standby = await fleet.scheduler(lease_seconds=lease_s, app=app)
    before = await leader_row(db, pg_schema)
    assert fleet.by_holder(before["holder"]) is old
    old.send(signal.SIGKILL)
    await old.wait()

    seen_through = seen["checked_through_ms"]
    [gap] = occurrences("0 0 1 1 *", "UTC", seen_through - YEAR_MS, seen_through)[-1:]
    await db.execute(
        f'UPDATE "{pg_schema}".records '
        "SET value = jsonb_set(value, '{0}', to_jsonb($2::bigint)) "
        "WHERE space = 'scheduler-ticks' AND key = $1",
        "new_year",
        gap - 1,
    )
    assert now_ms() < before["expires_at_ms"], "the gap came due under the dead node's lease"

    taken = await eventually(
        lambda: held_by(fleet, db, pg_schema, standby),
        within_s=lease_s + SCHEDULER_TICK_S + 2,
        what="the standby to take the lease over",
    )
    assert taken["acquired_at_ms"] >= before["expires_at_ms"], "not before the dead lease expired"

    async def gap_fired() -> bool:
        return gap in await fired_occurrences(db, pg_schema, "new_year")

    await eventually(gap_fired, within_s=10, what="the gap's occurrence to fire")
    await rounds_pass(db, pg_schema, 5)
    assert await fired_occurrences(db, pg_schema, "new_year") == [gap]
    assert gap not in dispatched(old)
    (event,) = [e for e in standby.events("jobs.scheduler.dispatched") if e["task"] == "new_year"]
    assert int(event["occurrence_ms"]) == gap
    assert event["late_ms"] > 0, "fired late, after the instant it was due"


async def test_sigterm_hands_the_lease_to_the_standby_on_its_next_round(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, fleet: Fleet
) -> None:
    """SIGTERM: the leader finishes its round, deletes the row and exits 0; the standby takes
    the lease before the old row would have expired, so it never waits out the TTL."""
    lease_s = 10.0
    old = await fleet.scheduler(lease_seconds=lease_s)
    await eventually(lambda: held_by(fleet, db, pg_schema, old), within_s=10, what="first leader")
    standby = await fleet.scheduler(lease_seconds=lease_s)
    before = await leader_row(db, pg_schema)
    old.send(signal.SIGTERM)
    taken = await eventually(
        lambda: held_by(fleet, db, pg_schema, standby),
        within_s=lease_s,
        what="the standby to promote",
    )
    assert taken["acquired_at_ms"] < before["expires_at_ms"], "the row was deleted, not expired"
    assert await old.wait() == 0
    assert old.events("jobs.scheduler.leadership-released")


async def test_a_paused_leader_loses_the_lease_logs_it_once_and_keeps_polling(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str, fleet: Fleet
) -> None:
    """SIGSTOP the leader past its lease: the standby takes over; after SIGCONT the old node
    logs jobs.scheduler.leadership-lost exactly once, stays up, and stands by."""
    lease_s = 2.0
    old = await fleet.scheduler(lease_seconds=lease_s)
    await eventually(lambda: held_by(fleet, db, pg_schema, old), within_s=10, what="first leader")
    standby = await fleet.scheduler(lease_seconds=lease_s)
    old.send(signal.SIGSTOP)
    try:
        await eventually(
            lambda: held_by(fleet, db, pg_schema, standby),
            within_s=lease_s + SCHEDULER_TICK_S + 5,
            what="the standby to take over from the stopped leader",
        )
    finally:
        old.send(signal.SIGCONT)

    async def lost_logged() -> bool:
        return bool(old.events("jobs.scheduler.leadership-lost"))

    await eventually(lost_logged, within_s=10, what="leadership-lost in the old node's log")
    await rounds_pass(db, pg_schema, 10)
    assert len(old.events("jobs.scheduler.leadership-lost")) == 1
    assert old.running
    assert await held_by(fleet, db, pg_schema, standby)


async def test_a_scheduler_without_tasks_still_leads_and_measures_the_queues(
    driver: PostgresJobDriver, fleet: Fleet
) -> None:
    """What the Kubernetes operator runs in a namespace whose only need is an autoscaled
    DurableJob: a scheduler of an app with no tasks says so, takes the lease, and serves the
    queues' backlog (due plus running) on its /metrics from the database it alone reads."""
    from worker.app import noop

    from ferry._jobs.facade import set_job_driver

    node = await fleet.start(
        "scheduler",
        *("--app", "worker.app"),
        *("--tick-seconds", str(SCHEDULER_TICK_S)),
        *("--lease-seconds", "3"),
        *("--stats-seconds", "0.2"),
        *("--log-format", "json"),
        name="scheduler",
    )
    await eventually(node.answers, what="the scheduler's /livez answering", context=fleet.logs)
    previous = set_job_driver(driver)
    try:
        for n in range(3):
            await noop.enqueue({"n": n})
    finally:
        set_job_driver(previous)
    backlog = await eventually(
        lambda: _at(node.metric("job_queue_backlog", queue="default"), 3.0),
        what="the leader's backlog of 3",
        context=fleet.logs,
    )
    assert backlog == 3.0
    assert await node.metric("job_scheduler_leader") == 1.0
    [warned] = node.events("jobs.scheduler.no-tasks")
    assert warned["dispatches"] == "nothing"


async def _at(sample: Any, wanted: float) -> float | None:
    value = await sample
    return value if value == wanted else None
