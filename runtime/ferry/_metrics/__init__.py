"""Prometheus metrics and the liveness probe every ferry role serves on ``METRICS_PORT``."""

from ferry._metrics.catalog import WorkerMetrics
from ferry._metrics.maintenance_catalog import MaintenanceMetrics
from ferry._metrics.scheduler_catalog import SchedulerMetrics
from ferry._metrics.server import (
    DEFAULT_LOOP_LAG_BUDGET_S,
    DEFAULT_METRICS_PORT,
    MetricsServer,
    start_metrics_server,
)

__all__ = [
    "DEFAULT_LOOP_LAG_BUDGET_S",
    "DEFAULT_METRICS_PORT",
    "MaintenanceMetrics",
    "MetricsServer",
    "SchedulerMetrics",
    "WorkerMetrics",
    "start_metrics_server",
]
