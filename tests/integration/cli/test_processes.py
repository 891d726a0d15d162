"""``ferry jobs cancel`` and ``ferry workers ls`` against a live worker, and ``ferry dev`` —
real processes."""

from __future__ import annotations

import os
import signal
from types import ModuleType

import httpx
from support.processes import Fleet, free_port
from support.waiting import eventually

from ferry._clock import SystemClock
from ferry._jobs.facade import set_job_driver
from ferry.drivers import PostgresJobDriver, postgres_job_driver

from .conftest import Ferry, cli_env


async def state_of(driver: PostgresJobDriver, job_id: str) -> str | None:
    run = await driver.introspect.get_run(job_id)
    return run.summary.state if run is not None else None


async def test_cancelling_a_running_run_aborts_it_in_its_worker_and_settles_it_cancelled(
    ferry: Ferry, fleet: Fleet, cli_app: ModuleType, postgres_dsn: str, pg_schema: str
) -> None:
    """Budget: one worker, one run. Invariant: the cancel reaches the body through its
    signal at the next heartbeat, and the run ends ``cancelled`` — not retried, not dead."""
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, clock=SystemClock())
    previous = set_job_driver(driver)
    try:
        job_id = (await cli_app.linger.enqueue({"name": "long"})).job_id
    finally:
        set_job_driver(previous)
    env = cli_env(postgres_dsn, pg_schema)
    worker = await fleet.start(
        "worker", "--lease-seconds", "3", "--drain-seconds", "5", name="worker", env=env
    )
    try:
        await eventually(
            lambda: _is(driver, job_id, "running"), what="the claim", context=worker.log
        )

        def holding() -> bool:
            listed = ferry("workers", "ls", "--json").envelope["data"]["workers"]
            return len(listed) == 1 and listed[0]["runs"] == [job_id]

        await eventually(holding, what="ferry workers ls showing the run held", context=worker.log)
        cancel = ferry("jobs", "cancel", job_id, "--json")
        assert cancel.envelope["data"]["state"] == "running"
        await eventually(
            lambda: _is(driver, job_id, "cancelled"), what="the cancel", context=worker.log
        )
        run = await driver.introspect.get_run(job_id)
        assert run is not None and run.summary.last_error is not None
        assert run.summary.last_error.code == "X_CANCELLED"
        assert run.summary.attempts == 1 and run.locked_by is None
    finally:
        worker.send(signal.SIGTERM)
        await worker.wait()
        await driver.close()
    assert ferry("workers", "ls", "--json").envelope["data"]["workers"] == []  # it left


async def _is(driver: PostgresJobDriver, job_id: str, state: str) -> bool:
    return await state_of(driver, job_id) == state


async def test_ferry_dev_runs_the_worker_and_serves_the_dashboard_in_one_process(
    fleet: Fleet, cli_app: ModuleType, postgres_dsn: str, pg_schema: str
) -> None:
    port = free_port()
    env = cli_env(postgres_dsn, pg_schema)
    dev = await fleet.start("dev", "--port", str(port), "--insecure-dev", name="dev", env=env)
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, clock=SystemClock())
    try:

        async def dashboard_up() -> bool:
            assert dev.running, dev.log()
            try:
                async with httpx.AsyncClient() as http:
                    page = await http.get(f"http://127.0.0.1:{port}/admin/jobs")
            except httpx.HTTPError:
                return False
            return page.status_code == 200

        await eventually(dashboard_up, what="the dashboard answering", context=dev.log)
        previous = set_job_driver(driver)
        try:
            job_id = (await cli_app.greet.enqueue({"name": "dev"})).job_id
            failing_id = (await cli_app.greet.enqueue({"name": "flop", "fail": True})).job_id
        finally:
            set_job_driver(previous)
        await eventually(
            lambda: _is(driver, job_id, "completed"), what="the run completing", context=dev.log
        )
        await eventually(
            lambda: _is(driver, failing_id, "dead"), what="the failing run dying", context=dev.log
        )
    finally:
        dev.send(signal.SIGTERM)
        code = await dev.wait()
        await driver.close()
    assert code == 0, dev.log()
    assert f"http://127.0.0.1:{port}/admin/jobs  (no token)" in dev.log()
    # The text log lines carry each event's fields, not just its name.
    [retrying] = [line for line in dev.log().splitlines() if "jobs.run.retrying" in line]
    for field in (f"job_id={failing_id}", "job=cli.greet", "code=X_JOB_FAILED", "attempt=1"):
        assert field in retrying, retrying
    # A line when each run starts and one when it settles, with its outcome and duration.
    lines = dev.log().splitlines()
    started = [line for line in lines if "jobs.run.started" in line and f"={job_id} " in line]
    [settled] = [line for line in lines if "jobs.run.settled" in line and f"={job_id} " in line]
    assert started and "job=cli.greet" in started[0] and "attempt=1" in started[0]
    assert "outcome=completed" in settled and "duration_ms=" in settled
    assert [
        line.split("outcome=")[1].split()[0]
        for line in lines
        if "jobs.run.settled" in line and f"={failing_id} " in line
    ] == ["retried", "dead"]
    # The environment other commands reach its database with.
    [reach] = [line for line in lines if line.startswith("database: export DATABASE_URL=")]
    assert f"FERRY_SCHEMA={pg_schema}" in reach


def test_ferry_admin_refuses_to_start_without_a_token(ferry: Ferry) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FERRY_ADMIN_")}
    result = ferry("admin", "--json", env={**env, "DATABASE_URL": "postgresql://x@127.0.0.1:1/x"})
    assert result.code == 1
    assert result.envelope["findings"][0]["code"] == "X_INVARIANT"
