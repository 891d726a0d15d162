"""Prometheus metrics and the liveness port, for a role run inside a process of your own."""

from ferry._metrics import SchedulerMetrics, WorkerMetrics, start_metrics_server

__all__ = ["SchedulerMetrics", "WorkerMetrics", "start_metrics_server"]
