"""``job_queue_oldest_age_seconds``: how long a queue's longest-waiting due run has waited."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from ferry._metrics import WorkerMetrics
from ferry.drivers.protocol import QueueStats


def test_the_queue_age_is_now_minus_when_the_oldest_due_run_became_due() -> None:
    metrics = WorkerMetrics(CollectorRegistry())
    waiting = QueueStats("default", {"queued": 3}, oldest_due_at_ms=1_000)
    idle = QueueStats("idle", {"completed": 9}, oldest_due_at_ms=None)
    metrics.record_stats([waiting, idle], now_ms=91_000)
    registry = metrics.registry
    assert registry.get_sample_value("job_queue_oldest_age_seconds", {"queue": "default"}) == 90
    assert registry.get_sample_value("job_queue_oldest_age_seconds", {"queue": "idle"}) == 0
    metrics.record_stats([QueueStats("default", {"queued": 0})], now_ms=92_000)
    assert registry.get_sample_value("job_queue_oldest_age_seconds", {"queue": "default"}) == 0
