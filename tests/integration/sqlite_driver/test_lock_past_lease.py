"""A write lock another connection holds on the file past the lease: the worker's renewals
meet ``X_DB_BUSY`` and each failure is logged (``jobs.heartbeat.failed``) — none is left to
asyncio's "Task exception was never retrieved" — and once the window closes the lease is
lost and counted. (A renewal failing after the worker stopped waiting for it is the
conformance suite's, on every driver.)"""

from __future__ import annotations

import asyncio
import gc
import logging
import sqlite3
from pathlib import Path

import pytest
from pydantic import BaseModel
from support.waiting import eventually

from ferry import JobContext, job
from ferry._clock import FrozenClock
from ferry._jobs.facade import set_job_driver
from ferry._jobs.observer import ExecutionObserver
from ferry._worker import JobWorker

from .conftest import DriverFactory

LEASE_MS = 30_000
INTERVAL_MS = 10_000
started: list[str] = []


class Key(BaseModel):
    key: str


@job(input=Key, idempotency_key=lambda i: f"locked-out:{i.key}", name="sqlite.locked-out")
async def locked_out(input: Key, ctx: JobContext) -> None:
    """Runs until its signal aborts, then stops as a body should."""
    started.append(input.key)
    await ctx.signal.wait()
    ctx.signal.throw_if_aborted()


class Lost(ExecutionObserver):
    def __init__(self) -> None:
        self.lost: list[str] = []

    def lease_lost(self, job_name: str, job_id: str, queue: str) -> None:
        self.lost.append(job_id)


async def test_renewals_that_meet_a_lock_held_past_busy_timeout_are_logged_and_the_lease_lost(
    drivers: DriverFactory,
    db_path: Path,
    clock: FrozenClock,
    caplog: pytest.LogCaptureFixture,
    unretrieved: list[str],
) -> None:
    caplog.set_level(logging.INFO, logger="ferry")
    driver = drivers(clock=clock, busy_timeout_ms=200)
    await driver.open()
    previous = set_job_driver(driver)
    observer = Lost()
    worker = JobWorker(
        driver=driver,
        jobs=[locked_out],
        lease_ms=LEASE_MS,
        heartbeat_interval_ms=INTERVAL_MS,
        concurrency=1,
        observer=observer,
    )
    await worker.start()
    application = sqlite3.connect(db_path, isolation_level=None)
    try:
        run = await locked_out.enqueue({"key": "a"})
        await eventually(lambda: started == ["a"], what="the body to start")
        application.execute("BEGIN IMMEDIATE")  # held past the busy timeout and the lease

        def busy_renewals() -> list[logging.LogRecord]:
            return [
                r
                for r in caplog.records
                if r.getMessage() == "jobs.heartbeat.failed"
                and "X_DB_BUSY" in str(r.__dict__.get("error"))
            ]

        clock.advance(INTERVAL_MS / 1000)  # a renewal goes out and meets the lock
        await eventually(busy_renewals, what="a renewal's X_DB_BUSY to be logged")
        assert observer.lost == [], "the window still has room for the next renewal"
        # The window closes: the next round counts the lease lost and renews nothing.
        clock.advance((LEASE_MS - INTERVAL_MS) / 1000)
        await eventually(lambda: observer.lost == [run.job_id], what="the lease to be lost")
    finally:
        application.execute("ROLLBACK")
        application.close()
        worker.drain("test-end")
        await asyncio.wait_for(worker.wait_stopped(), 60)
        set_job_driver(previous)
    gc.collect()
    assert unretrieved == []
