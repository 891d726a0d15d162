"""Prometheus metrics and the liveness probe every ferry role serves on ``METRICS_PORT``."""

from ferry.metrics.catalog import WorkerMetrics
from ferry.metrics.server import (
    DEFAULT_LOOP_LAG_BUDGET_S,
    DEFAULT_METRICS_PORT,
    MetricsServer,
    start_metrics_server,
)

__all__ = [
    "DEFAULT_LOOP_LAG_BUDGET_S",
    "DEFAULT_METRICS_PORT",
    "MetricsServer",
    "WorkerMetrics",
    "start_metrics_server",
]
