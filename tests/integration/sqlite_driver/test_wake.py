"""Wake-ups without NOTIFY: an enqueue through this driver wakes its idle waiters at once;
another connection's commit (another process, the application) within one poll."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiosqlite

from ferry.drivers.protocol import EnqueueRequest

from .conftest import DriverFactory

WITHIN_S = 30.0
"""A guard on each wait, never a timing: the test asserts that the wake came."""


def _request(n: int) -> EnqueueRequest:
    return EnqueueRequest(
        name="work", queue="default", payload={"n": n}, idempotency_key=f"work:{n}", max_attempts=3
    )


async def test_an_enqueue_in_this_process_wakes_a_waiter_before_any_poll(
    drivers: DriverFactory,
) -> None:
    driver = drivers(wake_poll_ms=3_600_000)  # the watcher never looks again
    wake = driver.wake()
    await driver.open()
    assert await wake.wait(int(WITHIN_S * 1000))  # the watcher's first look is news
    waiting = asyncio.create_task(wake.wait(int(WITHIN_S * 1000)))
    await asyncio.sleep(0)
    await driver.enqueue(_request(1))
    assert await waiting is True


async def test_another_drivers_enqueue_wakes_a_waiter_through_the_poll(
    drivers: DriverFactory,
) -> None:
    idle, other = drivers(), drivers()
    await idle.open()
    wake = idle.wake()
    await wake.wait(int(WITHIN_S * 1000))  # the first look
    waiting = asyncio.create_task(wake.wait(int(WITHIN_S * 1000)))
    await asyncio.sleep(0)
    started = time.perf_counter()
    await other.enqueue(_request(1))
    assert await waiting is True
    print(f"cross-connection wake after {(time.perf_counter() - started) * 1000:.1f} ms")


async def test_the_applications_commit_wakes_the_relay(
    drivers: DriverFactory, db_path: Path
) -> None:
    driver = drivers()
    await driver.open()
    wake = driver.outbox.wake()
    await wake.wait(int(WITHIN_S * 1000))  # the first look
    async with aiosqlite.connect(db_path) as conn:
        await conn.execute("BEGIN IMMEDIATE")
        await driver.outbox.append("t", {}, connection=conn)
        waiting = asyncio.create_task(wake.wait(int(WITHIN_S * 1000)))
        await conn.commit()
    assert await waiting is True
    assert await driver.outbox.pending() == 1


async def test_the_wake_is_healthy_while_the_watcher_reads_the_file(
    drivers: DriverFactory,
) -> None:
    driver = drivers()
    await driver.open()  # the watcher reads a file that is there; it never creates one
    changes: list[bool] = []
    wake = driver.wake()
    wake.add_health_listener(changes.append)
    await wake.wait(int(WITHIN_S * 1000))
    assert wake.healthy and changes == [True]
    assert wake.idle_poll_ms == 5_000
    await driver.close()
    assert not wake.healthy and changes == [True, False]


async def test_an_import_of_due_runs_wakes_this_processs_idle_workers(
    drivers: DriverFactory, tmp_path: Path
) -> None:
    from ferry.drivers import sqlite_job_driver

    source = sqlite_job_driver(tmp_path / "old.db")
    target = drivers(wake_poll_ms=3_600_000)  # only the in-process announce can wake it
    try:
        await source.enqueue(_request(1))
        [moved] = await source.transfer.reserve("drain:t", target=target.location, limit=5)
        wake = target.wake()
        await target.open()
        assert await wake.wait(int(WITHIN_S * 1000))  # the watcher's first look is news
        waiting = asyncio.create_task(wake.wait(int(WITHIN_S * 1000)))
        await asyncio.sleep(0)
        [imported] = await target.transfer.import_runs([moved])
        assert imported.outcome == "imported"
        assert await waiting is True
    finally:
        await source.close()
