"""Maintenance's metrics (documented in ``docs/metrics.md``), in the role's own registry."""

from __future__ import annotations

from dataclasses import asdict

from prometheus_client import CollectorRegistry, Counter, Gauge

from ferry.drivers.protocol import PruneReport

PRUNED_KINDS = tuple(asdict(PruneReport()))
"""``completed``, ``dead``, ``slots``, ``outbox``, ``webhook_attempts``."""


class MaintenanceMetrics:
    """What the maintenance holder removed, and when it last pruned."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.pruned_total = Counter(
            "job_maintenance_pruned",
            "Rows maintenance deleted, by kind: completed (and cancelled) runs, dead runs, "
            "expired slots, published outbox entries, webhook attempt rows, expired records, empty "
            "rate windows.",
            ["kind"],
            registry=registry,
        )
        self.last_run = Gauge(
            "job_maintenance_last_run_timestamp_seconds",
            "When this process last finished a prune round (epoch seconds; 0 before its first).",
            registry=registry,
        )
        for kind in PRUNED_KINDS:
            self.pruned_total.labels(kind=kind)

    def pruned(self, report: PruneReport, *, at_ms: int) -> None:
        """Count one round's deletions and stamp its end."""
        for kind, count in asdict(report).items():
            if count:
                self.pruned_total.labels(kind=kind).inc(count)
        self.last_run.set(at_ms / 1000)
