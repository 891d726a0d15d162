"""``ferry dev --db sqlite:///…``: worker, scheduler and dashboard in one process on a
SQLite file, with no database server anywhere."""

from __future__ import annotations

import signal

from support.processes import free_port
from support.waiting import eventually

from ferry.drivers import SqliteJobDriver
from ferry.drivers.protocol import RunFilter

from . import app
from .processes import Roles


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
