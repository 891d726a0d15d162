"""The pytest plugin under pytest-asyncio's two modes: auto runs async tests that use the
fixtures as they are; strict runs marked ones, and an unmarked one fails saying what to
configure (rather than pytest's bare "async def functions are not natively supported")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TESTS = """
import pytest
from pydantic import BaseModel
from ferry import job

class Ping(BaseModel):
    n: int

@job(input=Ping, idempotency_key=lambda i: f"ping:{i.n}", name="ping")
async def ping(input: Ping) -> int:
    return input.n

async def test_unmarked(ferry_harness):
    await ferry_harness.run_jobs(ping, {"n": 1})

@pytest.mark.asyncio
async def test_marked(ferry_harness):
    trace = await ferry_harness.run_jobs(ping, {"n": 2})
"""


def _run(directory: Path, mode: str) -> subprocess.CompletedProcess[str]:
    (directory / "pytest.ini").write_text(
        f"[pytest]\nasyncio_mode = {mode}\nasyncio_default_fixture_loop_scope = function\n"
        "addopts = -p no:cacheprovider -p no:django\n"
    )
    (directory / "test_pings.py").write_text(TESTS)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q"],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("mode", ["auto", "strict"])
def test_the_fixtures_work_in_either_mode_and_say_what_to_configure(
    mode: str, tmp_path: Path
) -> None:
    done = _run(tmp_path, mode)
    if mode == "auto":
        assert done.returncode == 0, done.stdout
        assert "2 passed" in done.stdout
    else:
        assert done.returncode == 1 and "1 passed, 1 error" in done.stdout, done.stdout
        assert "test_unmarked is an async test using ferry's fixtures" in done.stdout
        assert "asyncio_mode = auto" in done.stdout
