"""The queue gauges: how long a queue's longest-waiting due run has waited, and its backlog."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from ferry._metrics.queue_catalog import QueueMetrics
from ferry.drivers.protocol import QueueStats


def test_the_queue_age_is_now_minus_when_the_oldest_due_run_became_due() -> None:
    registry = CollectorRegistry()
    metrics = QueueMetrics(registry)
    waiting = QueueStats("default", {"queued": 3}, oldest_due_at_ms=1_000)
    idle = QueueStats("idle", {"completed": 9}, oldest_due_at_ms=None)
    metrics.record([waiting, idle], now_ms=91_000)
    assert registry.get_sample_value("job_queue_oldest_age_seconds", {"queue": "default"}) == 90
    assert registry.get_sample_value("job_queue_oldest_age_seconds", {"queue": "idle"}) == 0
    metrics.record([QueueStats("default", {"queued": 0})], now_ms=92_000)
    assert registry.get_sample_value("job_queue_oldest_age_seconds", {"queue": "default"}) == 0


def test_the_backlog_is_the_due_runs_plus_the_running_ones_and_a_paused_queue_has_no_due() -> None:
    registry = CollectorRegistry()
    metrics = QueueMetrics(registry)
    busy = QueueStats("busy", {"queued": 40, "running": 7, "sleeping": 9}, due=25)
    paused = QueueStats("held", {"queued": 12, "running": 2}, paused=True, due=12)
    metrics.record([busy, paused], now_ms=0)
    assert registry.get_sample_value("job_queue_backlog", {"queue": "busy"}) == 32
    assert registry.get_sample_value("job_queue_backlog", {"queue": "held"}) == 2


def test_cleared_gauges_report_no_queue_at_all() -> None:
    registry = CollectorRegistry()
    metrics = QueueMetrics(registry)
    metrics.record([QueueStats("busy", {"queued": 1}, due=1)], now_ms=0)
    metrics.clear()
    assert registry.get_sample_value("job_queue_backlog", {"queue": "busy"}) is None
    queued = {"queue": "busy", "state": "queued"}
    assert registry.get_sample_value("job_queue_depth", queued) is None
