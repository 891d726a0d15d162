"""Queue depth by state and queue age, sampled from ``driver.stats()`` for
``job_queue_depth`` and ``job_queue_oldest_age_seconds``."""

from __future__ import annotations

import logging

from ferry._metrics.catalog import WorkerMetrics
from ferry.drivers.protocol import JobDriver

logger = logging.getLogger("ferry.worker")


async def sample_queue_depth(driver: JobDriver, metrics: WorkerMetrics, interval_ms: int) -> None:
    """Every ``interval_ms``, set the queue-depth and queue-age gauges; a failed sample is
    logged and skipped."""
    while True:
        try:
            metrics.record_stats(await driver.stats(), now_ms=driver.clock.now_ms())
        except Exception as error:  # a sample is advisory: the next one may succeed
            logger.warning("jobs.stats.failed", extra={"error": f"{type(error).__name__}: {error}"})
        await driver.clock.sleep_ms(interval_ms)
