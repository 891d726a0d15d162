"""What the process-level suites share: a free port, a bounded wait for a condition, and
a handle on one spawned ``ferry`` role (worker, scheduler) with its log and metrics port.

Importable as ``role_process``: the integration folder is the root these suites' packages
(``worker``, ``scheduler``, …) are imported from.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TypeVar

T = TypeVar("T")


def free_port() -> int:
    """A loopback port nobody listens on right now."""
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
class RoleProcess:
    """One spawned ``ferry`` role: its process, its log file, its metrics port."""

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

    exit_bound_s: ClassVar[float] = 60.0
    """How long ``wait()`` waits for an exit before failing (a guard, not a timing)."""

    async def wait(self, within_s: float | None = None) -> int:
        bound = self.exit_bound_s if within_s is None else within_s
        return await asyncio.wait_for(self.process.wait(), bound)

    async def http(self, path: str) -> tuple[int, str]:
        """``GET path`` on the metrics port: (status, body)."""
        return await asyncio.to_thread(_get, f"http://127.0.0.1:{self.metrics_port}{path}")

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
