"""PostgreSQL restarted under a running worker: it reconnects and carries on, losing nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import asyncpg
import pgserver
import pytest
from pgserver._commands import pg_ctl
from pgserver.postgres_server import PostgresServer
from support.processes import Fleet
from support.waiting import eventually

from ferry._jobs.facade import enqueue_many
from ferry.drivers import PostgresJobDriver, postgres_job_driver

from . import app
from .conftest import app_installed

T = TypeVar("T")
SCHEMA = "ferry_restart"


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test's own, so stopping it disturbs no other test."""
    server = pgserver.get_server(tmp_path / "pgdata", cleanup_mode="delete")
    yield server
    server.cleanup()


@pytest.fixture
async def restart_driver(own_server: PostgresServer) -> AsyncIterator[PostgresJobDriver]:
    driver = postgres_job_driver(own_server.get_uri(), schema=SCHEMA)
    await driver.open()
    async with app_installed(driver, own_server.get_uri()):
        yield driver
    await driver.close()


async def _retrying(action: Callable[[], Awaitable[T]], what: str) -> T:
    """The test's own calls ride out the restart too: retry until the server answers."""

    async def attempt() -> tuple[T] | None:
        try:
            return (await action(),)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            return None

    (answer,) = await eventually(attempt, what=what)
    return answer


async def test_a_worker_reconnects_after_postgres_restarts_and_loses_nothing(
    own_server: PostgresServer, restart_driver: PostgresJobDriver, tmp_path: Path
) -> None:
    dsn = own_server.get_uri()
    fleet = Fleet(dsn, SCHEMA, tmp_path)
    try:
        worker = await fleet.worker(lease_seconds=2, concurrency=4)
        before = [{"key": f"before-{n}", "step_ms": [20, 20]} for n in range(40)]
        await enqueue_many(app.chain.definition, before)

        async def some_completed() -> bool:
            return await worker.metric(
                "job_runs_total", queue="default", job="chain", outcome="completed"
            ) not in (None, 0.0)

        await eventually(some_completed, within_s=20, what="work under way before the restart")
        pg_ctl(["-w", "stop", "-m", "fast"], pgdata=own_server.pgdata, user=own_server.system_user)

        async def noticed() -> bool:
            return "jobs.claim.failed" in worker.log()

        await eventually(noticed, within_s=20, what="the worker to notice the outage")
        own_server.ensure_postgres_running()
        after = [{"key": f"after-{n}", "step_ms": [0, 0]} for n in range(40)]
        await _retrying(
            lambda: enqueue_many(app.chain.definition, after), "the enqueue after the restart"
        )

        async def all_completed() -> bool:
            states = await _retrying(lambda: _states(dsn), "the run states")
            return states == {"completed": 80}

        await eventually(all_completed, within_s=90, what="all 80 runs completed")
        assert worker.running, "the same worker process carried on"
        assert await worker.metric("job_wake_listener_healthy") == 1, "LISTEN came back"
        effects = await _retrying(lambda: _effect_counts(dsn), "the effect counts")
        assert len(effects) == 160 and min(effects.values()) >= 1, "every step ran"
    finally:
        await fleet.close()
        print(fleet.logs())


async def _states(dsn: str) -> dict[str, int]:
    connection = await asyncpg.connect(dsn)
    try:
        rows = await connection.fetch(f"SELECT state, count(*) FROM {SCHEMA}.jobs GROUP BY state")
        return {row["state"]: row["count"] for row in rows}
    finally:
        await connection.close()


async def _effect_counts(dsn: str) -> dict[tuple[str, str], int]:
    connection = await asyncpg.connect(dsn)
    try:
        rows = await connection.fetch(
            f"SELECT job_key, step, count(*) FROM {SCHEMA}.effects GROUP BY job_key, step"
        )
        return {(row["job_key"], row["step"]): row["count"] for row in rows}
    finally:
        await connection.close()
