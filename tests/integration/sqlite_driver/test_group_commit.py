"""The writer's group commit: writes queued together share one transaction, and one that
fails rolls back to its own savepoint while its neighbours commit."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Awaitable

import pytest
from support.waiting import eventually

from ferry.drivers import SqliteJobDriver
from ferry.drivers._sqlite.database import Database


def _pause(queue: str) -> str:
    return f"INSERT INTO ferry_paused_queues (queue, paused_at_ms) VALUES ('{queue}', 0)"


async def _writer_held(db: Database) -> tuple[asyncio.Task[bool], threading.Event]:
    """A write that holds the writer until the returned gate opens (so what is queued
    meanwhile waits behind it, as one group)."""
    entered, gate = threading.Event(), threading.Event()

    def hold(c: sqlite3.Connection) -> bool:
        entered.set()
        return gate.wait(30)

    held = asyncio.create_task(db.transaction(hold))
    await asyncio.to_thread(entered.wait, 30)
    return held, gate


async def _queued(db: Database, count: int) -> None:
    async def check() -> bool:
        return db._writer._queue.qsize() == count

    await eventually(check, within_s=30, what=f"{count} writes queued")


async def _paused(driver: SqliteJobDriver) -> set[str]:
    return {s.queue for s in await driver.stats() if s.paused}


async def test_a_failing_write_rolls_back_alone_and_the_rest_of_its_group_commits(
    driver: SqliteJobDriver,
) -> None:
    db: Database = driver._db
    held, gate = await _writer_held(db)

    def fails(c: sqlite3.Connection) -> None:
        c.execute(_pause("lost"))
        raise RuntimeError("this write fails after its insert")

    writes: list[Awaitable[object]] = [
        db.transaction(lambda c: c.execute(_pause("a")).rowcount),
        db.transaction(fails),
        db.transaction(lambda c: c.execute(_pause("b")).rowcount),
    ]
    group = [asyncio.ensure_future(w) for w in writes]
    await _queued(db, 3)
    gate.set()
    assert await held is True
    a, failed, b = await asyncio.gather(*group, return_exceptions=True)
    assert (a, b) == (1, 1)
    assert isinstance(failed, RuntimeError)
    assert await _paused(driver) == {"a", "b"}


async def test_a_write_whose_caller_stopped_waiting_is_not_run(driver: SqliteJobDriver) -> None:
    db: Database = driver._db
    held, gate = await _writer_held(db)
    abandoned = asyncio.ensure_future(db.transaction(lambda c: c.execute(_pause("never"))))
    after = asyncio.ensure_future(db.transaction(lambda c: c.execute(_pause("after"))))
    await _queued(db, 2)
    abandoned.cancel()
    gate.set()
    await held
    await after  # the writer works in order: it has passed the abandoned write
    with pytest.raises(asyncio.CancelledError):
        await abandoned
    assert await _paused(driver) == {"after"}
