"""The framework examples run their own test suites (pytest-django for the Django shop)
against the suite's real PostgreSQL, as a user runs them: ``pytest`` in the example."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize("example", ["django_shop", "fastapi_app"])
def test_the_example_passes_its_own_suite(example: str, postgres_dsn: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q"],
        cwd=EXAMPLES / example,
        env={**os.environ, "DATABASE_URL": postgres_dsn},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and " failed" not in done.stdout
