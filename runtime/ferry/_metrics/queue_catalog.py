"""The queue gauges (documented in ``docs/metrics.md``): depth by state, the age of the
oldest due run, and the backlog — sampled from ``driver.stats()`` by every worker, and by the
scheduler while it leads.

The scheduler's are the ones that matter when no worker runs: a DurableJob scaled to zero
has no worker to report its queue, and the Kubernetes operator reads the backlog off the
namespace's scheduler leader to bring the first worker up. The operator never holds the
database's credentials: the number travels over ``/metrics``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Gauge

from ferry._aio import first_of
from ferry.drivers.protocol import JOB_STATES, JobDriver, QueueStats

logger = logging.getLogger("ferry.metrics")


class QueueMetrics:
    """Per-queue gauges set from one ``driver.stats()`` sample, registered in ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.depth = Gauge(
            "job_queue_depth",
            "Runs per queue and state, sampled from the driver's stats.",
            ["queue", "state"],
            registry=registry,
        )
        self.oldest_age = Gauge(
            "job_queue_oldest_age_seconds",
            "How long the longest-waiting due run of each queue has waited (0 when none "
            "waits), sampled from the driver's stats.",
            ["queue"],
            registry=registry,
        )
        self.backlog = Gauge(
            "job_queue_backlog",
            "Runs that keep a queue's workers busy now: due (queued or sleeping, run_at "
            "passed; none while the queue is paused) plus running. What the Kubernetes "
            "operator, or KEDA, scales a DurableJob's workers on.",
            ["queue"],
            registry=registry,
        )

    def record(self, stats: Iterable[QueueStats], *, now_ms: int) -> None:
        """Set every gauge from one sample."""
        for queue in stats:
            for state in JOB_STATES:
                self.depth.labels(queue=queue.queue, state=state).set(queue.counts.get(state, 0))
            waited_ms = 0 if queue.oldest_due_at_ms is None else now_ms - queue.oldest_due_at_ms
            self.oldest_age.labels(queue=queue.queue).set(max(waited_ms, 0) / 1000)
            waiting = 0 if queue.paused else queue.due
            self.backlog.labels(queue=queue.queue).set(waiting + queue.counts.get("running", 0))

    def clear(self) -> None:
        """Report no queue at all: what a scheduler standing by serves (its last sample as a
        leader would go stale, and a reader would take it for the leader's)."""
        for gauge in (self.depth, self.oldest_age, self.backlog):
            gauge.clear()


async def sample_queues(
    driver: JobDriver,
    metrics: QueueMetrics,
    interval_ms: int,
    *,
    measuring: Callable[[], bool] | None = None,
) -> None:
    """Every ``interval_ms``, set the queue gauges from ``driver.stats()`` while
    ``measuring()`` holds (always when ``None``), and clear them while it does not. A failed
    sample is logged and skipped: the gauges are advisory and the next sample may succeed."""
    while True:
        if measuring is None or measuring():
            try:
                metrics.record(await driver.stats(), now_ms=driver.clock.now_ms())
            except Exception as error:
                logger.warning(
                    "jobs.stats.failed", extra={"error": f"{type(error).__name__}: {error}"}
                )
        else:
            metrics.clear()
        await driver.clock.sleep_ms(interval_ms)


class QueueSampler:
    """``sample_queues`` as a role of its own, drained with the process: the scheduler runs
    one beside its dispatch loop, measuring while it leads."""

    def __init__(
        self,
        driver: JobDriver,
        metrics: QueueMetrics,
        *,
        every_ms: int,
        measuring: Callable[[], bool] | None = None,
    ) -> None:
        self._driver = driver
        self._metrics = metrics
        self._every_ms = max(every_ms, 1)
        self._measuring = measuring
        self._stopping = asyncio.Event()

    async def run(self) -> None:
        """Sample until ``drain()``."""
        sampling = sample_queues(
            self._driver, self._metrics, self._every_ms, measuring=self._measuring
        )
        await first_of(self._stopping.wait(), sampling)

    def drain(self, signal_name: str = "SIGTERM") -> None:
        """Stop sampling; ``run`` returns at once."""
        self._stopping.set()
