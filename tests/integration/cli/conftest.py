"""Fixtures for the CLI tests: a seeded schema and a way to run ``ferry`` as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ferry._clock import FrozenClock
from ferry.drivers import PostgresJobDriver, postgres_job_driver

HERE = Path(__file__).parent
REPO = HERE.parents[2]
APP = "cli_app"


def cli_env(dsn: str, schema: str) -> dict[str, str]:
    """The environment a ``ferry`` process gets: the test database, schema and app."""
    return {
        **os.environ,
        "DATABASE_URL": dsn,
        "FERRY_SCHEMA": schema,
        "FERRY_APP": APP,
        "PYTHONPATH": os.pathsep.join([str(HERE), str(REPO / "runtime")]),
    }


@dataclass
class Result:
    """One finished ``ferry`` process."""

    code: int
    stdout: str
    stderr: str

    @property
    def envelope(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.stdout)
        return parsed


Ferry = Callable[..., Result]


@pytest.fixture(autouse=True, scope="session")
def _app_on_path() -> Iterator[None]:
    """The app importable as ``cli_app`` here too: one module, as the processes load it."""
    sys.path.insert(0, str(HERE))
    yield
    sys.path.remove(str(HERE))


@pytest.fixture
def ferry(postgres_dsn: str, pg_schema: str) -> Ferry:
    """Run ``ferry <args>`` as a real process against the test's schema."""

    def run(*args: str, env: dict[str, str] | None = None) -> Result:
        done = subprocess.run(
            [sys.executable, "-m", "ferry", *args],
            env=env or cli_env(postgres_dsn, pg_schema),
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return Result(done.returncode, done.stdout, done.stderr)

    return run


@pytest.fixture
async def seeded(postgres_dsn: str, pg_schema: str) -> AsyncIterator[PostgresJobDriver]:
    """The schema with one completed, one dead and one queued run (on a frozen clock)."""
    from cli_app import seed

    clock = FrozenClock()
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, clock=clock)
    await seed(driver, clock)
    yield driver
    await driver.close()


def shape(value: Any) -> Any:
    """The JSON structure of ``value`` with every leaf replaced by its type name."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if value is None:
        return "null"
    return type(value).__name__


def golden(name: str, value: Any) -> None:
    """Compare ``value``'s shape with ``golden/<name>.json``; ``FERRY_GOLDEN=write`` records it."""
    path = HERE / "golden" / f"{name}.json"
    if os.environ.get("FERRY_GOLDEN") == "write":
        path.write_text(json.dumps(shape(value), indent=2, sort_keys=True) + "\n")
    assert shape(value) == json.loads(path.read_text()), f"{name}: the JSON shape changed"
