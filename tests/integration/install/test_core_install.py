"""``pip install ferry`` with no extra is enough to enqueue and work jobs on PostgreSQL.

A clean virtual environment (built once per test session) gets the distribution built
from this checkout and nothing else; a job is enqueued there, a ``ferry worker`` of that
environment works it against the suite's PostgreSQL while its metrics port answers, and
the dashboard — an extra — is refused by name.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support.processes import REPO, FerryProcess, free_port
from support.waiting import eventually

from ferry.drivers import postgres_job_driver
from ferry.drivers.protocol import JobDriver

EXTRA_MODULES = ("starlette", "uvicorn", "jinja2", "redis", "pgserver", "mcp", "aiosqlite")

APP = """\
from pydantic import BaseModel

from ferry import define_api, job


class Greeting(BaseModel):
    name: str


@job(input=Greeting, idempotency_key=lambda i: f"greet:{i.name}")
async def greet(input: Greeting) -> str:
    return f"hello {input.name}"


api = define_api(jobs=[greet])
"""

ENQUEUE = """\
import asyncio, os
from ferry import set_job_driver
from ferry.drivers import postgres_job_driver
from core_app import greet

async def main() -> None:
    driver = postgres_job_driver(os.environ["DATABASE_URL"], schema=os.environ["FERRY_SCHEMA"])
    set_job_driver(driver)
    print((await greet.enqueue({"name": "core"})).job_id)
    await driver.close()

asyncio.run(main())
"""


@pytest.fixture(scope="session")
def core_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment holding ``pip install <this checkout>`` and nothing else; the
    source is copied out first, so the build leaves nothing in the checkout."""
    root = tmp_path_factory.mktemp("core-install")
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for folder in ("runtime", "operator"):
        shutil.copytree(REPO / folder, source / folder, ignore=ignore)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(source)],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert done.returncode == 0, done.stderr
    return venv


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    (tmp_path / "core_app.py").write_text(APP)
    return tmp_path


def _env(postgres_dsn: str, schema: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "DATABASE_URL": postgres_dsn, "FERRY_SCHEMA": schema}


@pytest.fixture
async def test_driver(postgres_dsn: str, pg_schema: str) -> AsyncIterator[JobDriver]:
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema)
    yield driver
    await driver.close()


def test_the_core_install_has_no_extra(core_venv: Path) -> None:
    probe = (
        "import importlib.util, json; "
        f"print(json.dumps([m for m in {EXTRA_MODULES!r} if importlib.util.find_spec(m)]))"
    )
    done = subprocess.run(
        [str(core_venv / "bin" / "python"), "-c", probe], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


async def test_a_core_install_enqueues_and_works_a_job_on_postgres(
    core_venv: Path, app_dir: Path, postgres_dsn: str, pg_schema: str, test_driver: JobDriver
) -> None:
    env = _env(postgres_dsn, pg_schema)
    enqueued = await asyncio.to_thread(
        subprocess.run,
        [str(core_venv / "bin" / "python"), "-c", ENQUEUE],
        cwd=app_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert enqueued.returncode == 0, enqueued.stderr
    job_id = enqueued.stdout.strip()

    port = free_port()
    log_path = app_dir / "worker.log"
    with log_path.open("w") as log:
        process = await asyncio.create_subprocess_exec(
            str(core_venv / "bin" / "ferry"),
            "worker",
            "--app",
            "core_app:api",
            "--metrics-port",
            str(port),
            cwd=app_dir,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    worker = FerryProcess(process, log_path, port)
    try:
        await eventually(worker.answers, what="the worker's metrics port answers")
        status, metrics = await worker.http("/metrics")
        assert status == 200 and "job_" in metrics

        async def completed() -> bool:
            run = await test_driver.introspect.get_run(job_id)
            return run is not None and run.summary.state == "completed"

        await eventually(completed, what="the core install's worker completed the run")
        run = await test_driver.introspect.get_run(job_id)
        assert run is not None and run.result == "hello core"
        worker.send(signal.SIGTERM)
        assert await worker.wait() == 0, worker.log()
    finally:
        await worker.stop()


def test_a_core_install_refuses_the_dashboard_by_its_extra(
    core_venv: Path, app_dir: Path, postgres_dsn: str, pg_schema: str
) -> None:
    done = subprocess.run(
        [str(core_venv / "bin" / "ferry"), "--json", "admin", "--insecure-dev"],
        cwd=app_dir,
        env=_env(postgres_dsn, pg_schema),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    (finding,) = json.loads(done.stdout)["findings"]
    assert finding["code"] == "X_EXTRA_MISSING"
    assert finding["fix"] == "pip install 'ferry[dashboard]'"
