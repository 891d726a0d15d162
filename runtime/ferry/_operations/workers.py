"""The fleet as operators see it: every live worker process, what it serves and holds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from ferry._fleet import WorkerPresence, live_workers
from ferry._operations.envelope import camel_keys
from ferry.drivers.protocol import JobDriver


async def list_workers(driver: JobDriver) -> list[WorkerPresence]:
    """Every worker whose presence has not lapsed, oldest first (``X_DRIVER_CAPABILITY``
    on a driver that keeps no registry)."""
    return await live_workers(driver, by="the fleet registry (ferry workers, the dashboard, MCP)")


def workers_summary(workers: Sequence[WorkerPresence]) -> str:
    """``workers ls``' summary line."""
    held = sum(len(w.runs) for w in workers)
    return f"{len(workers)} worker(s) holding {held} run(s)"


def workers_json(workers: Sequence[WorkerPresence]) -> dict[str, Any]:
    """``ferry workers ls --json``'s data: each worker's fields, and ``held`` (how many runs
    it holds)."""
    return {
        "workers": [{**camel_keys(asdict(w)), "held": len(w.runs)} for w in workers],
    }
