"""Real ``ferry`` processes for the tests: run a command, start a role, signal it, read it.

Every process runs ``python -m ferry <args>`` from the repository root, with the test's
database and schema in its environment and the test apps importable (``worker.app``,
``scheduler.scheduler_app``, ``outbox.relay_app``, ``cli_app``…). A long-running one
writes its output to a log file that failure messages quote, and serves ``/metrics`` and
``/livez`` on a free port. ``Fleet`` starts them for one test and kills what is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.waiting import eventually

REPO = Path(__file__).resolve().parents[2]
INTEGRATION_DIR = REPO / "tests" / "integration"
CLI_APP_DIR = INTEGRATION_DIR / "cli"
"""Where ``cli_app`` lives: the app of the CLI, dashboard and MCP tests."""


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def ferry_env(dsn: str, schema: str, **extra: str) -> dict[str, str]:
    """The environment a ``ferry`` process under test gets: the test's database and schema,
    the test apps on the path; ``extra`` adds or overrides variables."""
    path = [str(INTEGRATION_DIR), str(CLI_APP_DIR), str(REPO / "runtime")]
    return {
        **os.environ,
        "DATABASE_URL": dsn,
        "FERRY_SCHEMA": schema,
        "PYTHONPATH": os.pathsep.join(path),
        **extra,
    }


@dataclass
class Finished:
    """One ``ferry`` command run to its end."""

    code: int
    stdout: str
    stderr: str

    @property
    def envelope(self) -> dict[str, Any]:
        """The ``--json`` envelope it printed."""
        parsed: dict[str, Any] = json.loads(self.stdout)
        return parsed


def run_ferry(*args: str, env: dict[str, str], timeout_s: float = 120) -> Finished:
    """Run ``ferry <args>`` to its end (bounded: a guard against a hang, not a timing)."""
    done = subprocess.run(
        [sys.executable, "-m", "ferry", *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    return Finished(done.returncode, done.stdout, done.stderr)


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@dataclass
class FerryProcess:
    """One started ``ferry`` process: the process, its log file, its metrics port."""

    process: asyncio.subprocess.Process
    log_path: Path
    metrics_port: int
    exit_bound_s: float = 60.0
    """How long ``wait()`` waits for an exit before failing (a guard, not a timing)."""

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    def send(self, sig: signal.Signals) -> None:
        self.process.send_signal(sig)

    async def wait(self, within_s: float | None = None) -> int:
        """The exit code, once the process has exited."""
        bound = self.exit_bound_s if within_s is None else within_s
        return await asyncio.wait_for(self.process.wait(), bound)

    async def stop(self) -> None:
        """Kill it if it still runs, and reap it."""
        if self.running:
            self.process.kill()
        await self.process.wait()

    async def http(self, path: str) -> tuple[int, str]:
        """``GET path`` on the metrics port: (status, body)."""
        return await asyncio.to_thread(_get, f"http://127.0.0.1:{self.metrics_port}{path}")

    async def answers(self, path: str = "/livez") -> bool:
        """Whether ``path`` answers 200 yet; an exited process fails the wait with its log."""
        if not self.running:
            raise AssertionError(f"{self.log_path.name} exited early:\n{self.log()}")
        with contextlib.suppress(OSError):
            status, _ = await self.http(path)
            return status == 200
        return False

    async def metric(self, name: str, **labels: str) -> float | None:
        """The current value of one sample on ``/metrics`` (None when absent)."""
        _, body = await self.http("/metrics")
        wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        sample = f"{name}{{{wanted}}}" if labels else name
        for line in body.splitlines():
            if line.startswith(sample + " "):
                return float(line.rsplit(" ", 1)[1])
        return None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    @property
    def worker_id(self) -> str:
        """The id a ``ferry worker`` started with ``--log-format json`` logged at start."""
        [started] = self.events("jobs.worker.started")
        return str(started["worker_id"])

    def records(self) -> list[dict[str, Any]]:
        """Every JSON log line (``--log-format json``) written so far, in order.

        A running process may be halfway through writing its last line, so only lines
        ended by a newline are read; a torn tail is read on the next call, once whole."""
        lines = self.log().splitlines(keepends=True)
        return [json.loads(line) for line in lines if line.startswith("{") and line.endswith("\n")]

    def events(self, name: str) -> list[dict[str, Any]]:
        """Every JSON log line of event ``name``, in order."""
        return [record for record in self.records() if record.get("event") == name]


async def start_ferry(
    *args: str, env: dict[str, str], log_path: Path, metrics_port: int | None = None
) -> FerryProcess:
    """Start ``ferry <args>`` with its output in ``log_path`` and ``/metrics`` on a free
    port (``METRICS_PORT``, unless ``metrics_port`` names one)."""
    port = metrics_port or free_port()
    with log_path.open("ab") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "ferry",
            *args,
            env={**env, "METRICS_PORT": str(port)},
            cwd=REPO,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    return FerryProcess(process, log_path, port)


WORKER_APP = "worker.app"
SCHEDULER_APP = "scheduler.scheduler_app"
SCHEDULER_TICK_S = 0.2


@dataclass
class Fleet:
    """The ``ferry`` processes of one test, on its database and schema; whatever still
    runs at the end is killed, and every log is printed (pytest shows it on a failure)."""

    dsn: str
    schema: str
    log_dir: Path
    overrides: dict[str, str] = field(default_factory=dict)
    """Variables every process of the fleet gets on top: a queue on another store
    (``DATABASE_URL``, ``FERRY_SCHEMA``), its app's effect tables kept on ``dsn``."""
    spawned: list[FerryProcess] = field(default_factory=list)
    _started: int = 0

    def env(self, **extra: str) -> dict[str, str]:
        return ferry_env(self.dsn, self.schema, **{**self.overrides, **extra})

    async def start(
        self,
        *args: str,
        name: str,
        env: dict[str, str] | None = None,
        metrics_port: int | None = None,
    ) -> FerryProcess:
        """Start ``ferry <args>``, logging to ``<name>-<n>.log``."""
        self._started += 1  # before any await: processes started together log apart
        log_path = self.log_dir / f"{name}-{self._started}.log"
        started = await start_ferry(
            *args, env=env or self.env(), log_path=log_path, metrics_port=metrics_port
        )
        self.spawned.append(started)
        return started

    async def worker(
        self,
        *,
        lease_seconds: float = 2.0,
        concurrency: int = 8,
        drain_seconds: float = 30.0,
        extra: Sequence[str] = (),
        ready: bool = True,
        via_role: bool = False,
        metrics_port: int | None = None,
    ) -> FerryProcess:
        """``ferry worker --app worker.app`` (``via_role``: ``ROLE=worker ferry run``); with
        ``ready``, answers once its ``/livez`` does."""
        worker = await self.start(
            "run" if via_role else "worker",
            *("--app", WORKER_APP),
            *("--lease-seconds", str(lease_seconds)),
            *("--concurrency", str(concurrency)),
            *("--drain-seconds", str(drain_seconds)),
            *extra,
            name="worker",
            env=self.env(ROLE="worker"),
            metrics_port=metrics_port,
        )
        if ready:
            await eventually(
                worker.answers, what="the worker's /livez answering", context=self.logs
            )
        return worker

    async def scheduler(self, *, lease_seconds: float, app: str = SCHEDULER_APP) -> FerryProcess:
        """``ferry scheduler --app <app>`` with a 0.2 s tick and JSON logs; answers once it
        has logged its start (so it is running rounds)."""
        node = await self.start(
            "scheduler",
            *("--app", app),
            *("--tick-seconds", str(SCHEDULER_TICK_S)),
            *("--lease-seconds", str(lease_seconds)),
            *("--log-format", "json"),
            name="scheduler",
        )
        node.exit_bound_s = 30.0
        await self._logged(node, "jobs.scheduler.started", what="the scheduler's start")
        return node

    async def relay(self, *, app: str = WORKER_APP) -> FerryProcess:
        """``ferry relay --app <app>`` with JSON logs; answers once it has logged its start
        (a relay still opening its database when the test moves it would refuse and exit,
        as a role that cannot reach its database at start does)."""
        node = await self.start("relay", "--app", app, "--log-format", "json", name="relay")
        await self._logged(node, "outbox.relay.started", what="the relay's start")
        return node

    async def _logged(self, node: FerryProcess, event: str, *, what: str) -> None:
        """Wait until ``node`` has logged ``event``; fails at once if it exited first."""

        async def seen() -> bool:
            if not node.running:
                raise AssertionError(f"{what}: the process exited early:\n{self.logs()}")
            return bool(node.events(event))

        await eventually(seen, what=what)

    def by_holder(self, holder: str) -> FerryProcess:
        """The process whose id (``<host>:<pid>:<random>``) is ``holder``."""
        pid = int(holder.split(":")[1])
        return next(node for node in self.spawned if node.pid == pid)

    async def close(self) -> None:
        for started in self.spawned:
            await started.stop()

    def logs(self) -> str:
        return "\n".join(f"--- {p.log_path.name}\n{p.log()[-4000:]}" for p in self.spawned)
