"""``ferry workers ls``: the fleet — every live worker process, what it serves and holds."""

from __future__ import annotations

import argparse
from typing import Any

import ferry._operations as operations
from ferry._cli.jobs_commands import bind_driver_command
from ferry._cli.tables import rendering, table
from ferry._operations.envelope import Outcome
from ferry._operations.filters import instant
from ferry.drivers.protocol import JobDriver


def register(subparsers: Any) -> None:
    """Add ``ferry workers ls``."""
    workers = subparsers.add_parser("workers", help="the fleet: live worker processes")
    commands = workers.add_subparsers(dest="workers_command", required=True)
    ls = commands.add_parser("ls", help="every live worker: host, pid, queues, runs held")
    bind_driver_command(ls, ["workers", "ls"], list_workers)


async def list_workers(args: argparse.Namespace, driver: JobDriver) -> Outcome:
    """Every worker whose presence has not lapsed, oldest first."""
    workers = await operations.list_workers(driver)
    grid = table(
        None,
        ["worker", "host", "pid", "version", "queues", "concurrency", "started", "heartbeat",
         "held", "runs"],
        [
            (
                w.id,
                w.host,
                w.pid,
                w.version,
                ", ".join(w.queues),
                w.concurrency,
                instant(w.started_at_ms),
                instant(w.heartbeat_at_ms),
                len(w.runs),
                ", ".join(w.runs[:10]) + (" …" if len(w.runs) > 10 else ""),
            )
            for w in workers
        ],
    )  # fmt: skip
    return Outcome(
        "workers ls",
        operations.workers_summary(workers),
        operations.workers_json(workers),
        text=rendering(grid),
    )
