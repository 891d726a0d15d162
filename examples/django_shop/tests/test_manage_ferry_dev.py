"""``manage.py ferry dev`` serves the worker, the scheduler and the dashboard on the shop: a
real process, on a ferry schema of its own in the server the tests use."""

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

SHOP = Path(__file__).resolve().parents[1]
BOUND_S = 60.0
"""How long the process may take to answer before the test fails (a guard, not a timing)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def schema() -> Iterator[str]:
    name = f"ferry_t_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def test_manage_py_ferry_dev_serves_worker_scheduler_and_dashboard(schema: str) -> None:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "ferry", "dev", "--port", str(port), "--insecure-dev"],
        cwd=SHOP,
        env={**os.environ, "FERRY_SCHEMA": schema},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + BOUND_S
        page = None
        while page is None and time.monotonic() < deadline and process.poll() is None:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/admin/jobs/tasks", timeout=2)
                page = answer if answer.status_code == 200 else None
            except httpx.TransportError:
                time.sleep(0.1)  # polling for the server to listen, not timing anything
        assert page is not None, "the dashboard never answered"
        assert "nightly_report" in page.text, "the discovered task is on the dashboard"
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=BOUND_S)
    assert "2 job(s), 1 task(s)" in output, output
