"""Live workers per queue, read from the fleet registry, for the ``job_workers`` gauge.

A worker samples it beside the queue gauges (``ferry._metrics.queue_catalog``) but in a
loop of its own: the registry is read only on a driver that keeps one, and the scheduler,
which samples the queues too, runs no worker to report.
"""

from __future__ import annotations

import logging

from ferry import _fleet
from ferry._metrics.catalog import WorkerMetrics
from ferry.drivers.protocol import JobDriver

logger = logging.getLogger("ferry.worker")


async def sample_workers(driver: JobDriver, metrics: WorkerMetrics, interval_ms: int) -> None:
    """Every ``interval_ms``, set the live-workers gauge; a failed sample is logged and
    skipped (the gauge is advisory, and the next sample may succeed)."""
    while True:
        try:
            workers = await _fleet.live_workers(driver, by="the job_workers gauge")
            metrics.record_workers(_fleet.workers_per_queue(workers))
        except Exception as error:
            logger.warning("jobs.stats.failed", extra={"error": f"{type(error).__name__}: {error}"})
        await driver.clock.sleep_ms(interval_ms)
