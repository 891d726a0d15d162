"""Real worker processes for the tests: spawn ``python -m ferry.cli worker``, signal, scrape.

Each worker runs ``--app worker.app`` (this folder's app) against the test's schema with
short leases, writes its log to a file, and serves ``/metrics`` and ``/livez`` on a free
port. Waiting is always for a *condition*, with a bound that is a guard, not a timing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

APP = "worker.app"
INTEGRATION_DIR = Path(__file__).resolve().parents[1]
REPO = Path(__file__).resolve().parents[3]


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def eventually(check: Callable[[], Awaitable[T | None]], *, within_s: float, what: str) -> T:
    """Poll ``check()`` until it answers something truthy; fail after ``within_s``."""
    deadline = asyncio.get_running_loop().time() + within_s
    while True:
        answer = await check()
        if answer:
            return answer
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"gave up after {within_s} s waiting for: {what}")
        await asyncio.sleep(0.05)


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@dataclass
class WorkerProcess:
    """One ``ferry worker`` process under test."""

    process: asyncio.subprocess.Process
    metrics_port: int
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    def send(self, sig: signal.Signals) -> None:
        self.process.send_signal(sig)

    async def wait(self, within_s: float = 60.0) -> int:
        return await asyncio.wait_for(self.process.wait(), within_s)

    async def http(self, path: str) -> tuple[int, str]:
        """``GET path`` on the worker's metrics port: (status, body)."""
        url = f"http://127.0.0.1:{self.metrics_port}{path}"
        return await asyncio.to_thread(_get, url)

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


@dataclass
class Fleet:
    """Spawns workers for one test and kills whatever is left at the end."""

    dsn: str
    schema: str
    log_dir: Path
    spawned: list[WorkerProcess] = field(default_factory=list)

    async def spawn(
        self,
        *,
        lease_seconds: float = 2.0,
        concurrency: int = 8,
        drain_seconds: float = 30.0,
        extra: Sequence[str] = (),
        ready: bool = True,
        via_role: bool = False,
        metrics_port: int | None = None,
    ) -> WorkerProcess:
        """Start ``ferry worker`` (``via_role``: ``ROLE=worker ferry run``); with ``ready``,
        return once its ``/livez`` answers."""
        port = metrics_port or free_port()
        log_path = self.log_dir / f"worker-{len(self.spawned)}.log"
        env = {
            **os.environ,
            "DATABASE_URL": self.dsn,
            "FERRY_SCHEMA": self.schema,
            "PYTHONPATH": str(INTEGRATION_DIR),
            "METRICS_PORT": str(port),
            "ROLE": "worker",
        }
        with log_path.open("wb") as log:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "ferry.cli",
                "run" if via_role else "worker",
                "--app",
                APP,
                "--lease-seconds",
                str(lease_seconds),
                "--concurrency",
                str(concurrency),
                "--drain-seconds",
                str(drain_seconds),
                *extra,
                env=env,
                cwd=REPO,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        worker = WorkerProcess(process, port, log_path)
        self.spawned.append(worker)
        if ready:
            await eventually(lambda: self._live(worker), within_s=30, what="worker /livez")
        return worker

    async def _live(self, worker: WorkerProcess) -> bool:
        if not worker.running:
            raise AssertionError(f"worker exited early:\n{worker.log()}")
        with contextlib.suppress(OSError):
            status, _ = await worker.http("/livez")
            return status == 200
        return False

    async def close(self) -> None:
        for worker in self.spawned:
            if worker.running:
                worker.process.kill()
                await worker.process.wait()

    def logs(self) -> str:
        return "\n".join(f"--- {w.log_path.name}\n{w.log()[-4000:]}" for w in self.spawned)
