"""``ferry`` processes on one SQLite file: workers and ``ferry dev``, with their logs.

Each runs ``--app sqlite_driver.app`` with ``DATABASE_URL=sqlite:///…`` and serves
``/metrics`` (or the dashboard) on a free port; waiting is always for a condition.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from support.processes import INTEGRATION_DIR, FerryProcess, start_ferry
from support.waiting import eventually

APP = "sqlite_driver.app"


@dataclass
class Roles:
    """Spawns roles for one test and kills whatever is left at the end."""

    url: str
    log_dir: Path
    spawned: list[FerryProcess] = field(default_factory=list)

    async def spawn(
        self, command: Sequence[str], *, ready_path: str = "/livez", port: int | None = None
    ) -> FerryProcess:
        """Start ``ferry <command> --app sqlite_driver.app`` and return once ``ready_path``
        answers 200 on its port (``--metrics-port``, or the dashboard's ``--port``)."""
        env = {**os.environ, "DATABASE_URL": self.url, "PYTHONPATH": str(INTEGRATION_DIR)}
        log_path = self.log_dir / f"{command[0]}-{len(self.spawned)}.log"
        role = await start_ferry(
            *command, "--app", APP, env=env, log_path=log_path, metrics_port=port
        )
        self.spawned.append(role)
        await eventually(
            lambda: role.answers(ready_path), within_s=60, what=ready_path, context=self.logs
        )
        return role

    async def worker(self, *options: str) -> FerryProcess:
        """A ``ferry worker`` with short leases (2 s) unless ``options`` say otherwise."""
        return await self.spawn(["worker", "--lease-seconds", "2", *options])

    async def close(self) -> None:
        for role in self.spawned:
            await role.stop()

    def logs(self) -> str:
        return "\n".join(f"--- {r.log_path.name}\n{r.log()[-4000:]}" for r in self.spawned)
