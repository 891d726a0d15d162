"""A store written by ferry 0.1.0 is migrated forward by this ferry with nothing lost.

The fixtures are the stores that release's own code wrote (``scripts/upgrade/record.py``
runs it): Postgres as ``pg_dump --inserts``, SQLite as ``iterdump``, Redis as every key of
the prefix. Each is loaded under this test's store name, migrated by this ferry's driver,
and read back through this ferry's API alone: every run with its steps, state, error and
lease, the slot, the scheduler's leader, tick and pause, the maintenance slot (now a
lease), the outbox, the webhook ledger's attempts, streak and disablement, the backfill
checkpoint and the revoked session — and ``ferry migrate --json`` says what it applied.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from redis.asyncio import Redis
from support.processes import ferry_env, run_ferry

from ferry._admin.sessions import Sessions
from ferry._backfill.ledger import BackfillCheckpoint, BackfillLedger
from ferry._clock import FrozenClock
from ferry._maintenance import MAINTENANCE_LEASE
from ferry._scheduler import SchedulerStore, TaskTick
from ferry._webhooks.ledger import EndpointState, RecordsWebhookLedger
from ferry.drivers import postgres_job_driver, redis_job_driver, sqlite_job_driver
from ferry.drivers.protocol import ClaimOptions, HeartbeatOptions, JobDriver, Migration, RunFilter

FIXTURES = Path(__file__).with_name("fixtures")
RECORDED = "upgrade_src"
T0 = 1_767_225_600_000
HOUR = 3_600_000


async def load_postgres(dsn: str, schema: str) -> None:
    dump = (FIXTURES / "postgres.sql").read_text().replace(RECORDED, schema)
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(dump)
    finally:
        await connection.close()


def load_sqlite(path: Path) -> None:
    connection = sqlite3.connect(path)
    try:
        connection.executescript((FIXTURES / "sqlite.sql").read_text())
    finally:
        connection.close()


async def load_redis(url: str, prefix: str) -> None:
    client = Redis.from_url(url, decode_responses=True)
    try:
        recorded = json.loads((FIXTURES / "redis.json").read_text())
        for key, stored in recorded.items():
            name = key.replace("{" + RECORDED + "}", "{" + prefix + "}")
            [(kind, value)] = stored.items()
            if kind == "hash":
                await client.hset(name, mapping=value)
            elif kind == "zset":
                await client.zadd(name, {member: score for member, score in value})
            elif kind == "set":
                await client.sadd(name, *value)
            else:
                await client.set(name, value)
    finally:
        await client.aclose()


def since_0_1_0(driver: JobDriver) -> list[Migration]:
    """The migrations this ferry ships that 0.1.0 did not (it stopped at 0008), in order:
    what an upgrade of its store applies."""
    return [m for m in driver.migrations if m.version > 8]


@pytest.fixture(params=["postgres", "sqlite", "redis"])
async def old_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[JobDriver, dict[str, str]]]:
    """A driver of this ferry on a store 0.1.0 wrote (nothing migrated yet), and the
    environment a ``ferry`` process reaches that store with."""
    clock = FrozenClock(T0)
    driver: JobDriver
    if request.param == "postgres":
        dsn, schema = request.getfixturevalue("postgres_dsn"), request.getfixturevalue("pg_schema")
        await load_postgres(dsn, schema)
        driver, env = postgres_job_driver(dsn, schema=schema, clock=clock), ferry_env(dsn, schema)
    elif request.param == "sqlite":
        path = tmp_path / "old.db"
        load_sqlite(path)
        url = f"sqlite:///{path}"
        driver, env = sqlite_job_driver(path, clock=clock), ferry_env(url, "ferry")
    else:
        url, prefix = request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
        await load_redis(url, prefix)
        driver, env = redis_job_driver(url, prefix=prefix, clock=clock), ferry_env(url, prefix)
    yield driver, env
    await driver.close()


async def test_migrate_says_what_it_applied_to_an_old_store(
    old_store: tuple[JobDriver, dict[str, str]],
) -> None:
    driver, env = old_store
    since = since_0_1_0(driver)
    first = run_ferry("migrate", "--json", env=env)
    assert first.code == 0, first.stderr
    data = json.loads(first.stdout)["data"]
    assert (data["applied"], data["migrations"]) == (
        [m.version for m in since],
        [m.label for m in since],
    )
    again = json.loads(run_ferry("migrate", "--json", env=env).stdout)["data"]
    assert again["applied"] == [] and again["at"] == since[-1].label


async def test_every_run_and_every_record_of_an_old_store_survives_the_upgrade(
    old_store: tuple[JobDriver, dict[str, str]],
) -> None:
    driver, _ = old_store
    assert await driver.migrate() == [m.version for m in since_0_1_0(driver)]
    introspect = driver.introspect  # type: ignore[attr-defined]
    runs = {r.name: r for r in await introspect.list_runs(RunFilter(limit=100))}
    assert {name: r.state for name, r in runs.items()} == {
        "upgrade.later": "queued",
        "upgrade.sleeping": "sleeping",
        "upgrade.running": "running",
        "upgrade.dead": "dead",
        "upgrade.done": "completed",
    }
    sleeping = await introspect.get_run(runs["upgrade.sleeping"].id)
    assert [s.name for s in sleeping.steps] == ["provision", "cool-off"]
    assert sleeping.steps[0].result == {"org": 7} and sleeping.steps[1].wake_at_ms == T0 + 3 * HOUR
    dead = await introspect.get_run(runs["upgrade.dead"].id)
    assert dead.summary.last_error.code == "X_BOOM" and len(dead.steps) == 1
    done = await introspect.get_run(runs["upgrade.done"].id)
    assert done.result == {"ok": True}
    queued = runs["upgrade.later"]
    assert (queued.run_at_ms, queued.tenant) == (T0 + HOUR, None)

    running = runs["upgrade.running"].id
    assert await driver.slots.holders("acct:1") == [running]  # type: ignore[attr-defined]
    assert await driver.heartbeat(running, HeartbeatOptions("w-old", HOUR)), "its lease holds"
    checkpoint = await BackfillLedger(driver).load("copy:1")
    assert checkpoint == BackfillCheckpoint("copy:1", {"after": 250}, 250, 5, False, T0)

    store = SchedulerStore(driver)
    leader = await store.leader(now_ms=T0)
    assert leader is not None and (leader.holder, leader.expires_at_ms) == ("sched-a", T0 + HOUR)
    maintainer = await driver.leases.read(MAINTENANCE_LEASE, now_ms=T0)  # type: ignore[attr-defined]
    assert maintainer is not None and maintainer.holder == "maint-1"
    assert await store.ticks() == {
        "nightly": TaskTick("nightly", T0 - 10, T0 - 3 * HOUR, T0 - 3 * HOUR + 250)
    }
    assert await store.paused_tasks() == {"weekly": T0 - 1}
    assert await store.record_tick(TaskTick("nightly", T0), lease=leader, now_ms=T0), (
        "the old leader's lease fences the new tick record"
    )

    assert await driver.outbox.pending() == 1  # type: ignore[attr-defined]
    ledger = RecordsWebhookLedger(driver)
    assert await ledger.endpoint("ep-1") == EndpointState(3, T0 + 9, "3 consecutive failures")
    assert [a.event_id for a in await ledger.attempts("ep-1")] == ["ev-4", "ev-3", "ev-2", "ev-1"]
    assert (await ledger.endpoint("ep-2")).consecutive_failures == 0
    assert await ledger.endpoint("ep-3") == EndpointState(0, T0 + 10, "disabled by an operator"), (
        "an endpoint disabled with no attempt logged stays disabled"
    )
    assert await Sessions(driver).revoked("sess-1")

    claimed = await driver.claim(ClaimOptions("w-new", HOUR, limit=10))
    assert claimed == [], "nothing is due before its time"
    driver.clock.advance("3h")  # type: ignore[attr-defined]
    due = {c.name for c in await driver.claim(ClaimOptions("w-new", HOUR, limit=10))}
    assert due == {"upgrade.later", "upgrade.sleeping", "upgrade.running"}
