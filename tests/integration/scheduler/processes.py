"""Real ``ferry scheduler`` processes: spawn, signal, read their JSON logs and the rows.

Every process runs ``--app scheduler.scheduler_app`` against the test's schema with a short
tick and lease. Waiting is always for a condition, with a bound that is a guard.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from role_process import RoleProcess, eventually, free_port

APP = "scheduler.scheduler_app"
INTEGRATION_DIR = Path(__file__).resolve().parents[1]
REPO = Path(__file__).resolve().parents[3]
TICK_S = 0.2


def cli_env(dsn: str, schema: str) -> dict[str, str]:
    """The environment a spawned ``ferry`` command gets: the database, the schema, the app."""
    return {
        **os.environ,
        "DATABASE_URL": dsn,
        "FERRY_SCHEMA": schema,
        "PYTHONPATH": os.pathsep.join([str(INTEGRATION_DIR), str(REPO / "runtime")]),
    }


class SchedulerProcess(RoleProcess):
    """One ``ferry scheduler`` process under test."""

    exit_bound_s = 30.0

    def events(self, name: str) -> list[dict[str, Any]]:
        """Every JSON log line of event ``name`` this process wrote."""
        found = []
        for line in self.log().splitlines():
            if line.startswith("{"):
                record = json.loads(line)
                if record.get("event") == name:
                    found.append(record)
        return found

    def dispatched(self) -> list[int]:
        """The occurrences this process dispatched, in order."""
        return [int(e["occurrence_ms"]) for e in self.events("jobs.scheduler.dispatched")]


@dataclass
class Schedulers:
    """Spawns scheduler processes for one test and kills whatever is left at the end."""

    dsn: str
    schema: str
    log_dir: Path
    spawned: list[SchedulerProcess] = field(default_factory=list)
    _started: int = 0

    async def spawn(self, *, lease_seconds: float) -> SchedulerProcess:
        """Start a scheduler and return once it has logged its start (so it is polling)."""
        self._started += 1  # before any await: spawns started together get their own logs
        log_path = self.log_dir / f"scheduler-{self._started}.log"
        metrics_port = free_port()
        with log_path.open("wb") as log:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "ferry",
                "scheduler",
                "--app",
                APP,
                "--tick-seconds",
                str(TICK_S),
                "--lease-seconds",
                str(lease_seconds),
                "--metrics-port",
                str(metrics_port),
                "--log-format",
                "json",
                env=cli_env(self.dsn, self.schema),
                cwd=REPO,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        node = SchedulerProcess(process, metrics_port, log_path)
        self.spawned.append(node)

        async def started() -> bool:
            if not node.running:
                raise AssertionError(f"scheduler exited early:\n{self.logs()}")
            return bool(node.events("jobs.scheduler.started"))

        await eventually(started, within_s=30, what="scheduler start")
        return node

    def by_holder(self, holder: str) -> SchedulerProcess:
        """The process whose id (``<host>:<pid>:<random>``) is ``holder``."""
        pid = int(holder.split(":")[1])
        return next(node for node in self.spawned if node.pid == pid)

    async def close(self) -> None:
        for node in self.spawned:
            if node.running:
                node.process.kill()
                await node.process.wait()

    def logs(self) -> str:
        return "\n".join(f"--- {n.log_path.name}\n{n.log()[-4000:]}" for n in self.spawned)
