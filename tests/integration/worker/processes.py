"""Real worker processes for the tests: spawn ``python -m ferry worker``, signal, scrape.

Each worker runs ``--app worker.app`` (this folder's app) against the test's schema with
short leases, writes its log to a file, and serves ``/metrics`` and ``/livez`` on a free
port. Waiting is always for a *condition*, with a bound that is a guard, not a timing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from role_process import RoleProcess, eventually, free_port

APP = "worker.app"
INTEGRATION_DIR = Path(__file__).resolve().parents[1]
REPO = Path(__file__).resolve().parents[3]


class WorkerProcess(RoleProcess):
    """One ``ferry worker`` process under test."""


@dataclass
class Fleet:
    """Spawns workers for one test and kills whatever is left at the end."""

    dsn: str
    schema: str
    log_dir: Path
    driver_url: str | None = None
    """The workers' ``DATABASE_URL`` when the queue is not on ``dsn`` (e.g. a Redis URL,
    with ``schema`` as its key prefix); the effect tables stay on ``dsn``."""
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
            "DATABASE_URL": self.driver_url or self.dsn,
            "EFFECTS_DATABASE_URL": self.dsn,
            "FERRY_SCHEMA": self.schema,
            "PYTHONPATH": str(INTEGRATION_DIR),
            "METRICS_PORT": str(port),
            "ROLE": "worker",
        }
        with log_path.open("wb") as log:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "ferry",
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
