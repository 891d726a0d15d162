"""``ferry`` processes on one SQLite file: workers and ``ferry dev``, with their logs.

Each runs ``--app sqlite_driver.app`` with ``DATABASE_URL=sqlite:///…`` and serves
``/metrics`` (or the dashboard) on a free port; waiting is always for a condition.
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

APP = "sqlite_driver.app"
INTEGRATION_DIR = Path(__file__).resolve().parents[1]
REPO = Path(__file__).resolve().parents[3]


@dataclass
class Roles:
    """Spawns roles for one test and kills whatever is left at the end."""

    url: str
    log_dir: Path
    spawned: list[RoleProcess] = field(default_factory=list)

    async def spawn(
        self, command: Sequence[str], *, ready_path: str = "/livez", port: int | None = None
    ) -> RoleProcess:
        """Start ``ferry <command> --app sqlite_driver.app`` and return once ``ready_path``
        answers 200 on its port (``--metrics-port``, or the dashboard's ``--port``)."""
        port = port or free_port()
        log_path = self.log_dir / f"{command[0]}-{len(self.spawned)}.log"
        env = {
            **os.environ,
            "DATABASE_URL": self.url,
            "PYTHONPATH": str(INTEGRATION_DIR),
            "METRICS_PORT": str(port),
        }
        with log_path.open("wb") as log:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "ferry",
                *command,
                "--app",
                APP,
                env=env,
                cwd=REPO,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        role = RoleProcess(process, port, log_path)
        self.spawned.append(role)
        await eventually(lambda: self._answers(role, ready_path), within_s=60, what=ready_path)
        return role

    async def worker(self, *options: str) -> RoleProcess:
        """A ``ferry worker`` with short leases (2 s) unless ``options`` say otherwise."""
        return await self.spawn(["worker", "--lease-seconds", "2", *options])

    async def _answers(self, role: RoleProcess, path: str) -> bool:
        if not role.running:
            raise AssertionError(f"{role.log_path.name} exited early:\n{role.log()}")
        with contextlib.suppress(OSError):
            status, _ = await role.http(path)
            return status == 200
        return False

    async def close(self) -> None:
        for role in self.spawned:
            if role.running:
                role.process.kill()
                await role.process.wait()

    def logs(self) -> str:
        return "\n".join(f"--- {r.log_path.name}\n{r.log()[-4000:]}" for r in self.spawned)
