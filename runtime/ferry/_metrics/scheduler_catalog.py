"""The scheduler's metrics catalog (documented in ``docs/metrics.md``).

Like the worker's, every metric lives in a ``CollectorRegistry`` handed in by the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge

from ferry._metrics.queue_catalog import QueueMetrics


class SchedulerMetrics:
    """The metrics a scheduler exports, registered in ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.leader = Gauge(
            "job_scheduler_leader",
            "1 while this node holds an unexpired leader lease (it dispatches), else 0. "
            "Alert when no node of a namespace reports 1.",
            registry=registry,
        )
        self.dispatches = Counter(
            "job_scheduler_dispatches",
            "Occurrences this node dispatched (their jobs enqueued and the task's tick moved).",
            ["task"],
            registry=registry,
        )
        self.declared = Gauge(
            "job_declared_info",
            "1 for every job the scheduler's app declares, labelled with the queue the code "
            "puts it on (what the Kubernetes operator compares with a DurableJob's queue).",
            ["job", "queue"],
            registry=registry,
        )
        # Set while this node leads (the one of the namespace measuring its queues), and
        # cleared while it stands by.
        self.queues = QueueMetrics(registry)

    def serve_tasks(self, tasks: Iterable[str]) -> None:
        """Start every task's counter at 0, so its first dispatch is an increase."""
        for task in tasks:
            self.dispatches.labels(task=task)

    def declare_jobs(self, jobs: Iterable[tuple[str, str]]) -> None:
        """Report each ``(job, declared queue)`` of the app."""
        for job, queue in jobs:
            self.declared.labels(job=job, queue=queue).set(1)

    def follow_leader(self, held: Callable[[], bool]) -> None:
        """Report whether this node leads, read at scrape time."""
        self.leader.set_function(lambda: 1.0 if held() else 0.0)

    def dispatched(self, task: str) -> None:
        """Count one dispatched occurrence of ``task``."""
        self.dispatches.labels(task=task).inc()
