"""``ferry jobs cancel`` against a live worker, and ``ferry dev`` — real processes."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
from role_process import free_port

from ferry._clock import SystemClock
from ferry._jobs.facade import set_job_driver
from ferry.drivers import PostgresJobDriver, postgres_job_driver

from .conftest import REPO, Ferry, cli_env


async def eventually(condition: Callable[[], Awaitable[bool]], what: str, log: Path) -> None:
    """Poll ``condition`` until it holds (bounded: a guard against a hang, not a timing)."""
    for _ in range(600):
        if await condition():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{what} never happened:\n{read_log(log)}")


def read_log(log: Path) -> str:
    """A process's output, for a failure message."""
    return log.read_text()


async def spawn(args: list[str], env: dict[str, str], log: Path) -> asyncio.subprocess.Process:
    with log.open("wb") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "ferry",
            *args,
            env=env,
            cwd=REPO,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=out,
        )


async def state_of(driver: PostgresJobDriver, job_id: str) -> str | None:
    run = await driver.introspect.get_run(job_id)
    return run.summary.state if run is not None else None


async def test_cancelling_a_running_run_aborts_it_in_its_worker_and_settles_it_cancelled(
    ferry: Ferry, postgres_dsn: str, pg_schema: str, tmp_path: Path
) -> None:
    """Budget: one worker, one run. Invariant: the cancel reaches the body through its
    signal at the next heartbeat, and the run ends ``cancelled`` — not retried, not dead."""
    from cli_app import linger

    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, clock=SystemClock())
    previous = set_job_driver(driver)
    try:
        job_id = (await linger.enqueue({"name": "long"})).job_id
    finally:
        set_job_driver(previous)
    env = {**cli_env(postgres_dsn, pg_schema), "METRICS_PORT": str(free_port())}
    log = tmp_path / "worker.log"
    worker = await spawn(["worker", "--lease-seconds", "3", "--drain-seconds", "5"], env, log)
    try:
        await eventually(lambda: _is(driver, job_id, "running"), "the claim", log)
        cancel = ferry("jobs", "cancel", job_id, "--json")
        assert cancel.envelope["data"]["state"] == "running"
        await eventually(lambda: _is(driver, job_id, "cancelled"), "the cancel", log)
        run = await driver.introspect.get_run(job_id)
        assert run is not None and run.summary.last_error is not None
        assert run.summary.last_error.code == "X_CANCELLED"
        assert run.summary.attempts == 1 and run.locked_by is None
    finally:
        worker.send_signal(signal.SIGTERM)
        await worker.wait()
        await driver.close()


async def _is(driver: PostgresJobDriver, job_id: str, state: str) -> bool:
    return await state_of(driver, job_id) == state


async def test_ferry_dev_runs_the_worker_and_serves_the_dashboard_in_one_process(
    postgres_dsn: str, pg_schema: str, tmp_path: Path
) -> None:
    from cli_app import greet

    port = free_port()
    log = tmp_path / "dev.log"
    env = cli_env(postgres_dsn, pg_schema)
    dev = await spawn(["dev", "--port", str(port), "--insecure-dev"], env, log)
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, clock=SystemClock())
    try:

        async def dashboard_up() -> bool:
            assert dev.returncode is None, read_log(log)
            try:
                async with httpx.AsyncClient() as http:
                    page = await http.get(f"http://127.0.0.1:{port}/admin/jobs")
            except httpx.HTTPError:
                return False
            return page.status_code == 200

        await eventually(dashboard_up, "the dashboard answering", log)
        previous = set_job_driver(driver)
        try:
            job_id = (await greet.enqueue({"name": "dev"})).job_id
            failing_id = (await greet.enqueue({"name": "flop", "fail": True})).job_id
        finally:
            set_job_driver(previous)
        await eventually(lambda: _is(driver, job_id, "completed"), "the run completing", log)
        await eventually(lambda: _is(driver, failing_id, "dead"), "the failing run dying", log)
    finally:
        dev.send_signal(signal.SIGTERM)
        code = await dev.wait()
        await driver.close()
    assert code == 0, read_log(log)
    assert f"http://127.0.0.1:{port}/admin/jobs  (no token)" in read_log(log)
    # The text log lines carry each event's fields, not just its name.
    [retrying] = [line for line in read_log(log).splitlines() if "jobs.run.retrying" in line]
    for field in (f"job_id={failing_id}", "job=cli.greet", "code=X_JOB_FAILED", "attempt=1"):
        assert field in retrying, retrying


def test_ferry_admin_refuses_to_start_without_a_token(ferry: Ferry) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FERRY_ADMIN_")}
    result = ferry("admin", "--json", env={**env, "DATABASE_URL": "postgresql://x@127.0.0.1:1/x"})
    assert result.code == 1
    assert result.envelope["findings"][0]["code"] == "X_INVARIANT"
