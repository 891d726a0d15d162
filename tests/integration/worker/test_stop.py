"""``job_worker(...)`` in-process: ``stop()`` waits and aborts nothing until a drain lands."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from support.waiting import blocked_in, eventually

from ferry._clock import FrozenClock
from ferry._jobs.facade import set_job_driver
from ferry._jobs.observer import ExecutionObserver, ExecutionReport
from ferry._worker import job_worker
from ferry.drivers import PostgresJobDriver, postgres_job_driver

from . import app


class _Reports(ExecutionObserver):
    def __init__(self) -> None:
        self.reports: list[ExecutionReport] = []

    def execution_finished(self, report: ExecutionReport) -> None:
        self.reports.append(report)


@pytest.fixture(autouse=True)
def _app_env(monkeypatch: pytest.MonkeyPatch, postgres_dsn: str, pg_schema: str) -> None:
    """The app's jobs write their effects through these, as in a worker process."""
    monkeypatch.setenv("DATABASE_URL", postgres_dsn)
    monkeypatch.setenv("FERRY_SCHEMA", pg_schema)


async def test_stop_aborts_nothing_and_waits_until_a_drain_adopts_its_deadline(
    driver: PostgresJobDriver, db: asyncpg.Connection
) -> None:
    schema = driver.schema
    observer = _Reports()
    worker = job_worker(
        driver=driver, jobs=[app.chain], lease_ms=2_000, drain_seconds=10, observer=observer
    )
    await worker.start()
    run = await app.chain.enqueue({"key": "k", "step_ms": [60_000]})

    async def running() -> bool:
        return bool(await db.fetchval(f'SELECT count(*) FROM "{schema}".effects'))

    await eventually(running, within_s=20, what="the body to start")
    stopping = asyncio.create_task(worker.stop())
    # The defined point: the teardown has stopped the claim loop and waits on the held run,
    # so all stop() will do before a run ends or a drain lands, it has done.
    await blocked_in("ferry-teardown", "Drain.wait_for")
    assert not stopping.done() and not worker.signal.aborted
    assert worker.in_flight == 1

    worker.drain("SIGTERM")
    await asyncio.wait_for(stopping, 10)
    await worker.close()
    row = await db.fetchrow(
        f'SELECT state, attempts, last_error_code FROM "{schema}".jobs WHERE id = $1',
        int(run.job_id),
    )
    assert (row["state"], row["attempts"], row["last_error_code"]) == ("queued", 0, "X_DRAINING")
    assert [r.outcome for r in observer.reports] == ["interrupted"]
    assert "SIGTERM" in (observer.reports[0].message or "")


async def test_the_drain_deadline_runs_on_the_workers_clock_and_abandons_what_ignores_it(
    driver: PostgresJobDriver, db: asyncpg.Connection, postgres_dsn: str
) -> None:
    schema = driver.schema
    clock = FrozenClock()
    frozen = postgres_job_driver(postgres_dsn, schema=schema, clock=clock, pool_max_size=4)
    observer = _Reports()
    worker = job_worker(
        driver=frozen, jobs=[app.stubborn], lease_ms=60_000, drain_seconds=30, observer=observer
    )
    set_job_driver(frozen)  # enqueue on the worker's clock
    await worker.start()
    run = await app.stubborn.enqueue({"key": "k"})
    try:

        async def running() -> bool:
            return bool(await db.fetchval(f'SELECT count(*) FROM "{schema}".effects'))

        await eventually(running, within_s=20, what="the stubborn body to start")
        worker.drain("SIGTERM")
        # The defined point: the deadline sleeps on the frozen clock and the teardown waits
        # on it and the held run — nothing but the clock (or the run) can end that wait.
        await blocked_in("ferry-drain-deadline", "FrozenClock.sleep_ms")
        await blocked_in("ferry-teardown", "Drain.wait_for")
        clock.advance("29s999ms")  # wakes every sleeper due by then, synchronously
        await blocked_in("ferry-drain-deadline", "FrozenClock.sleep_ms")  # not yet due
        assert worker.in_flight == 1
        clock.advance("1ms")
        await asyncio.wait_for(worker.wait_stopped(), 10)
    finally:
        await worker.close()
        await frozen.close()
    assert [(r.outcome, r.landed) for r in observer.reports] == [("abandoned", False)]
    assert observer.reports[0].duration_ms == 30_000, "held until the clock reached the deadline"
    row = await db.fetchrow(
        f'SELECT state, attempts FROM "{schema}".jobs WHERE id = $1', int(run.job_id)
    )
    assert (row["state"], row["attempts"]) == ("running", 1), "unsettled: the lease will lapse"
