"""A started worker for the conformance tests, and an observer of what it reported."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from ferry._jobs.observer import ExecutionObserver, ExecutionReport
from ferry._worker import JobWorker
from ferry.drivers.protocol import JobDriver

from .jobs_worker import held

LEASE_MS = 30_000
INTERVAL_MS = 10_000


class Outcomes(ExecutionObserver):
    """What the worker reported: failed renewals, lost leases, finished attempts."""

    def __init__(self) -> None:
        self.failed_renewals: list[str] = []
        self.lost: list[str] = []
        self.reports: list[ExecutionReport] = []

    def heartbeat_failed(self, job_name: str, job_id: str, queue: str, error: str) -> None:
        self.failed_renewals.append(error)

    def lease_lost(self, job_name: str, job_id: str, queue: str) -> None:
        self.lost.append(job_id)

    def execution_finished(self, report: ExecutionReport) -> None:
        self.reports.append(report)


@asynccontextmanager
async def started(driver: JobDriver, **options: Any) -> AsyncIterator[JobWorker]:
    """A started worker (lease ``LEASE_MS``, renewed every ``INTERVAL_MS`` unless
    ``options`` say otherwise), drained and stopped afterwards whatever its runs are doing."""
    options = {"lease_ms": LEASE_MS, "heartbeat_interval_ms": INTERVAL_MS, **options}
    worker = JobWorker(driver=driver, **options)
    await worker.start()
    try:
        yield worker
    finally:
        for gate in held.values():
            gate.set()
        worker.drain("test-end")
        await asyncio.wait_for(worker.wait_stopped(), 60)
