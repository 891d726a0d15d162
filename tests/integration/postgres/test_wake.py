"""The wake: a LISTEN session that starts idle workers at commit and heals when it drops.

Every wait here is bounded by a timeout and asserts an event (a health change, a
wake-up); time on the driver's side moves only by ``clock.advance``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest
from support.waiting import eventually

from ferry._clock import FrozenClock
from ferry.drivers._postgres import PostgresJobDriver, postgres_job_driver
from ferry.drivers._postgres.database import wake_application_name
from ferry.drivers._postgres.wake import (
    IDLE_POLL_MAX_MS,
    IDLE_POLL_MAX_WAKE_PROVEN_MS,
    ChannelWake,
)
from ferry.drivers.protocol import MovedRun

from .helpers import send


class HealthLog:
    """The wake's health changes, in order."""

    def __init__(self, wake: ChannelWake) -> None:
        self.changes: asyncio.Queue[bool] = asyncio.Queue()
        wake.add_health_listener(self.changes.put_nowait)

    async def next(self) -> bool:
        return await asyncio.wait_for(self.changes.get(), 10)


async def _listening(driver: PostgresJobDriver) -> tuple[ChannelWake, HealthLog]:
    """The driver's wake, once it listens, with the wake-up its (re)connect announces
    (notifications sent while nobody listened are lost, so it polls once) consumed."""
    wake = driver.wake()
    health = HealthLog(wake)
    assert await health.next() is True
    assert await wake.wait(0) is True
    return wake, health


async def test_a_commit_wakes_a_waiting_worker(driver: PostgresJobDriver) -> None:
    wake, _ = await _listening(driver)
    assert driver.wake() is wake  # one session per driver
    waiter = asyncio.create_task(wake.wait(60_000))
    await driver.enqueue(send("wake-up"))
    assert await asyncio.wait_for(waiter, 10) is True


async def test_a_run_moved_in_by_a_drain_wakes_a_waiting_worker(
    driver: PostgresJobDriver, clock: FrozenClock
) -> None:
    wake, _ = await _listening(driver)
    waiter = asyncio.create_task(wake.wait(60_000))
    now = clock.now_ms()
    moved = MovedRun(
        id="7",
        name="mail.send",
        queue="default",
        payload={"to": "a@b.c"},
        idempotency_key="moved-in",
        state="queued",
        attempts=1,
        max_attempts=3,
        priority=0,
        run_at_ms=now,
        tenant=None,
        actor=None,
        concurrency_key=None,
        last_error=None,
        progress=None,
        created_at_ms=now - 60_000,
        finished_at_ms=None,
    )
    [result] = await driver.transfer.import_runs([moved])
    assert result.outcome == "imported"
    assert await asyncio.wait_for(waiter, 10) is True


async def test_a_notify_while_nobody_waits_is_kept_for_the_next_wait(
    driver: PostgresJobDriver,
) -> None:
    wake, _ = await _listening(driver)
    await driver.enqueue(send("while-busy"))
    await asyncio.wait_for(wake.wait(60_000), 10)
    assert await wake.wait(0) is False  # consumed once, not replayed


async def test_a_wait_with_nothing_enqueued_times_out_on_the_clock(
    driver: PostgresJobDriver, clock: FrozenClock
) -> None:
    wake, _ = await _listening(driver)
    waiter = asyncio.create_task(wake.wait(1_000))
    deadline = clock.now_ms() + 1_000

    async def waiting() -> bool:
        return clock.next_deadline_ms() == deadline

    await eventually(waiting, what="the wait sleeping on the clock")
    clock.advance("1s")
    assert await asyncio.wait_for(waiter, 10) is False


async def test_the_wake_heals_after_its_session_is_killed(
    driver: PostgresJobDriver, clock: FrozenClock, db: asyncpg.Connection, pg_schema: str
) -> None:
    wake, health = await _listening(driver)
    assert wake.idle_poll_ms == IDLE_POLL_MAX_WAKE_PROVEN_MS

    killed = await db.fetch(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
        wake_application_name(pg_schema),
    )
    assert [row[0] for row in killed] == [True]
    assert await health.next() is False
    assert wake.healthy is False
    assert wake.idle_poll_ms == IDLE_POLL_MAX_MS  # poll sooner while deaf

    clock.advance("1s")  # past the reconnect backoff
    assert await health.next() is True
    assert wake.idle_poll_ms == IDLE_POLL_MAX_WAKE_PROVEN_MS
    assert await wake.wait(0) is True  # the reconnect's own poll-once

    waiter = asyncio.create_task(wake.wait(60_000))
    await driver.enqueue(send("after-healing"))
    assert await asyncio.wait_for(waiter, 10) is True


@pytest.fixture
async def pooled_driver(
    postgres_dsn: str, pg_schema: str, clock: FrozenClock
) -> AsyncIterator[PostgresJobDriver]:
    async with asyncpg.create_pool(postgres_dsn, min_size=1, max_size=3) as pool:
        driver = postgres_job_driver(pool, schema=pg_schema, clock=clock)
        yield driver
        await driver.close()


async def test_a_driver_on_a_borrowed_pool_listens_on_one_of_its_connections(
    pooled_driver: PostgresJobDriver,
) -> None:
    wake, _ = await _listening(pooled_driver)
    waiter = asyncio.create_task(wake.wait(60_000))
    await pooled_driver.enqueue(send("pooled"))
    assert await asyncio.wait_for(waiter, 10) is True
    await pooled_driver.close()
    assert wake.healthy is False


async def test_the_runs_and_the_outbox_share_the_drivers_one_listen_session(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str
) -> None:
    runs, _ = await _listening(driver)
    outbox = driver.outbox.wake()
    assert await asyncio.wait_for(outbox.wait(60_000), 10) is True  # its poll-once
    sessions = await db.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
        wake_application_name(pg_schema),
    )
    assert sessions == 1

    async with db.transaction():
        await driver.outbox.append("receipt", {"order": 1}, connection=db)
    assert await asyncio.wait_for(outbox.wait(60_000), 10) is True
    assert await runs.wait(0) is False  # an outbox commit wakes the relay, not the workers
