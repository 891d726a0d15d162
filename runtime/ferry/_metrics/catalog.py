"""The worker's metrics catalog (documented in ``docs/metrics.md``).

Every metric lives in one ``CollectorRegistry`` handed in by the caller, so a process
serves one registry and a test can build as many workers as it likes without name clashes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from ferry._jobs.observer import ExecutionObserver, ExecutionReport
from ferry._metrics.queue_catalog import QueueMetrics
from ferry.drivers.protocol import ClaimedJob

_DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900)
_CLAIM_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)


class WorkerMetrics:
    """The metrics a worker exports, registered in ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.leases_lost = Counter(
            "job_leases_lost",
            "Attempts whose lease lapsed, once per lapse: a whole window with no renewal "
            "landing, the fence refusing a settle or step write, or a settle that could not "
            "be sent. The run may execute twice. Alert on any increase.",
            ["queue"],
            registry=registry,
        )
        self.heartbeat_failures = Counter(
            "job_heartbeat_failures",
            "Lease renewals that failed or went unanswered (the window may still hold).",
            ["queue"],
            registry=registry,
        )
        self.runs = Counter(
            "job_runs",
            "Attempts this worker ended, by outcome (a settle the fence refused is "
            "superseded, never completed).",
            ["queue", "job", "outcome"],
            registry=registry,
        )
        self.run_duration = Histogram(
            "job_run_duration_seconds",
            "Wall time of one attempt, claim to verdict.",
            ["queue", "job"],
            buckets=_DURATION_BUCKETS,
            registry=registry,
        )
        self.step_executions = Counter(
            "job_step_executions",
            "Step functions actually run (a replay from storage is not counted).",
            ["job"],
            registry=registry,
        )
        self.claim_duration = Histogram(
            "job_claim_duration_seconds",
            "Round trip of one batched claim.",
            buckets=_CLAIM_BUCKETS,
            registry=registry,
        )
        self.rate_limited = Counter(
            "job_rate_limited",
            "Runs a claim deferred because their job's rate limit had no room for them "
            "(never leased, no attempt counted; each deferral counts once).",
            ["job"],
            registry=registry,
        )
        self.claim_failures = Counter(
            "job_claim_failures",
            "Claims that raised (database unreachable, restarting, …).",
            registry=registry,
        )
        self.in_flight = Gauge(
            "job_runs_in_flight",
            "Attempts this worker is executing now.",
            registry=registry,
        )
        self.queues = QueueMetrics(registry)
        self.workers = Gauge(
            "job_workers",
            "Live worker processes claiming from each queue, fleet-wide, sampled from the "
            "registry (every worker reports the same value: aggregate with max).",
            ["queue"],
            registry=registry,
        )
        self._worker_queues: set[str] = set()
        """Every queue the live-workers gauge has reported."""
        self.wake_healthy = Gauge(
            "job_wake_listener_healthy",
            "1 while the push channel waking idle workers (LISTEN, pub/sub) is up, else 0.",
            registry=registry,
        )

    def serve_queues(self, queues: Iterable[str]) -> None:
        """Start every per-queue counter at 0, so the first loss is an increase an alert sees."""
        for queue in queues:
            self.leases_lost.labels(queue=queue)
            self.heartbeat_failures.labels(queue=queue)

    def serve_rated(self, jobs: Iterable[str]) -> None:
        """Start the rate limit counter at 0 for each rated job, for the same reason."""
        for job in jobs:
            self.rate_limited.labels(job=job)

    def follow_wake(self, healthy: Callable[[], bool]) -> None:
        """Report the wake listener's health, read at scrape time."""
        self.wake_healthy.set_function(lambda: 1.0 if healthy() else 0.0)

    def record_workers(self, per_queue: Mapping[str, int]) -> None:
        """Set the live-workers gauge from one reading of the fleet registry (a queue no
        live worker serves any more reads 0, not its last value)."""
        self._worker_queues.update(per_queue)
        for queue in self._worker_queues:
            self.workers.labels(queue=queue).set(per_queue.get(queue, 0))

    def observer(self, then: ExecutionObserver) -> ExecutionObserver:
        """An execution observer that counts into these metrics, then calls ``then``."""
        return _MetricsObserver(self, then)


class _MetricsObserver(ExecutionObserver):
    """Counts every execution hook into ``WorkerMetrics`` and passes it on."""

    def __init__(self, metrics: WorkerMetrics, then: ExecutionObserver) -> None:
        self._metrics = metrics
        self._then = then

    def execution_started(self, claimed: ClaimedJob) -> None:
        self._then.execution_started(claimed)

    def step_executed(self, job_name: str, job_id: str, step_name: str) -> None:
        self._metrics.step_executions.labels(job=job_name).inc()
        self._then.step_executed(job_name, job_id, step_name)

    def heartbeat_failed(self, job_name: str, job_id: str, queue: str, error: str) -> None:
        self._metrics.heartbeat_failures.labels(queue=queue).inc()
        self._then.heartbeat_failed(job_name, job_id, queue, error)

    def lease_lost(self, job_name: str, job_id: str, queue: str) -> None:
        self._metrics.leases_lost.labels(queue=queue).inc()
        self._then.lease_lost(job_name, job_id, queue)

    def rate_limited(self, job_name: str, job_id: str, queue: str, until_ms: int) -> None:
        self._metrics.rate_limited.labels(job=job_name).inc()
        self._then.rate_limited(job_name, job_id, queue, until_ms)

    def execution_finished(self, report: ExecutionReport) -> None:
        self._metrics.runs.labels(
            queue=report.queue, job=report.job_name, outcome=report.outcome
        ).inc()
        self._metrics.run_duration.labels(queue=report.queue, job=report.job_name).observe(
            report.duration_ms / 1000
        )
        self._then.execution_finished(report)
