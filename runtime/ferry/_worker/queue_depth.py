"""Queue depth by state and queue age, sampled from ``driver.stats()`` for
``job_queue_depth`` and ``job_queue_oldest_age_seconds``; live workers per queue, from the
fleet registry, for ``job_workers``."""

from __future__ import annotations

import logging

from ferry import _fleet
from ferry._metrics.catalog import WorkerMetrics
from ferry.drivers.protocol import JobDriver

logger = logging.getLogger("ferry.worker")


async def sample_queue_depth(driver: JobDriver, metrics: WorkerMetrics, interval_ms: int) -> None:
    """Every ``interval_ms``, set the queue-depth and queue-age gauges and (on a driver
    keeping the fleet registry) the live-workers gauge; a failed sample is logged and
    skipped."""
    while True:
        try:
            metrics.record_stats(await driver.stats(), now_ms=driver.clock.now_ms())
            if _fleet.keeps_registry(driver):
                workers = await _fleet.live_workers(driver, by="the job_workers gauge")
                metrics.record_workers(_fleet.workers_per_queue(workers))
        except Exception as error:  # a sample is advisory: the next one may succeed
            logger.warning("jobs.stats.failed", extra={"error": f"{type(error).__name__}: {error}"})
        await driver.clock.sleep_ms(interval_ms)
