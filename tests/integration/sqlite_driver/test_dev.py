"""``ferry dev --db sqlite:///…``: worker, scheduler and dashboard in one process on a
SQLite file, with no database server anywhere."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator

import pytest
from role_process import eventually, free_port

from ferry._jobs.facade import set_job_driver
from ferry.drivers import SqliteJobDriver, sqlite_job_driver
from ferry.drivers.protocol import RunFilter

from . import app
from .processes import Roles


@pytest.fixture
async def enqueuer(roles: Roles) -> AsyncIterator[SqliteJobDriver]:
    """A driver in this test process on the same file, set as the job driver."""
    driver = sqlite_job_driver(roles.url)
    set_job_driver(driver)
    yield driver
    set_job_driver(None)
    await driver.close()


async def test_ferry_dev_on_a_sqlite_file_runs_jobs_and_serves_the_dashboard(
    roles: Roles, enqueuer: SqliteJobDriver
) -> None:
    port = free_port()
    dev = await roles.spawn(
        ["dev", "--insecure-dev", "--port", str(port)], ready_path="/admin/jobs", port=port
    )
    results = await app.chain.enqueue_many([{"key": f"k{n}"} for n in range(5)])

    async def all_completed() -> bool:
        runs = await enqueuer.introspect.list_runs(RunFilter(state="completed"))
        return len(runs) == 5

    await eventually(all_completed, within_s=60, what="5 runs completed by ferry dev")
    status, page = await dev.http("/admin/jobs")
    assert status == 200 and f"/admin/jobs/runs/{results[0].job_id}" in page
    assert "no token" in dev.log() and str(enqueuer.path) in dev.log()
    dev.send(signal.SIGTERM)
    assert await dev.wait() == 0
