"""The chart's Grafana dashboard reads only metrics the runtime really exports.

Every PromQL expression (panels and template variables) is parsed for metric names, and
each must be a sample name that ``WorkerMetrics``, ``SchedulerMetrics`` or
``MaintenanceMetrics`` registers — so
renaming a metric, or a panel asking for one that does not exist, fails here. Every label
a panel groups or filters by must be one of that metric's labels or a target label the
ServiceMonitor adds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from ferry._metrics import MaintenanceMetrics, SchedulerMetrics, WorkerMetrics

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "charts" / "ferry" / "dashboards" / "ferry.json"
TARGET_LABELS = {"namespace", "pod", "service", "instance", "job", "container", "endpoint"}
"""Labels Prometheus puts on every scraped series from the ServiceMonitor's targets."""


def _exported() -> dict[str, set[str]]:
    """Every sample name the runtime exports, with the labels it carries."""
    worker, scheduler = WorkerMetrics(CollectorRegistry()), SchedulerMetrics(CollectorRegistry())
    worker.serve_queues(["q"])
    worker.serve_rated(["j"])
    scheduler.serve_tasks(["t"])
    scheduler.declare_jobs([("j", "q")])
    worker.runs.labels(queue="q", job="j", outcome="completed").inc()
    worker.run_duration.labels(queue="q", job="j").observe(1)
    worker.step_executions.labels(job="j").inc()
    worker.queues.depth.labels(queue="q", state="queued").set(1)
    worker.queues.oldest_age.labels(queue="q").set(1)
    worker.queues.backlog.labels(queue="q").set(1)
    maintenance = MaintenanceMetrics(CollectorRegistry())
    names: dict[str, set[str]] = {}
    for registry in (worker.registry, scheduler.registry, maintenance.registry):
        for family in registry.collect():
            if family.type == "histogram":  # documented by its family name
                names.setdefault(family.name, set())
            for sample in family.samples:
                names.setdefault(sample.name, set()).update(sample.labels)
    return names


def _expressions(dashboard: dict[str, Any]) -> list[str]:
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    exprs += [v["definition"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    return exprs


def test_every_expression_reads_a_metric_the_runtime_exports() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    exported = _exported()
    for expr in _expressions(dashboard):
        used = set(re.findall(r"\bjob_[a-z_]+\b", expr))
        assert used, f"an expression that reads no ferry metric: {expr}"
        unknown = used - set(exported)
        assert not unknown, f"{expr} reads {unknown}, which the runtime does not export"
        labels: set[str] = set()
        for name in used:
            labels |= exported[name]
        grouped = {
            label.strip()
            for clause in re.findall(r"\bby \(([^)]*)\)", expr)
            for label in clause.split(",")
        }
        matched = set(re.findall(r"([a-z_]+)=~?\"", expr))
        stray = (grouped | matched) - labels - TARGET_LABELS - {"le"}
        assert not stray, f"{expr} uses labels {stray} that {used} do not carry"


def test_the_panels_cover_what_an_operator_watches() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    by_title = {p["title"]: " ".join(t["expr"] for t in p["targets"]) for p in dashboard["panels"]}
    wanted = {
        "Throughput by outcome": "job_runs_total",
        "Queue depth": "job_queue_depth",
        "Queue age": "job_queue_oldest_age_seconds",
        "Claim latency": "job_claim_duration_seconds_bucket",
        "Leases lost": "job_leases_lost_total",
        "Heartbeat failures": "job_heartbeat_failures_total",
        "Scheduler leader": "job_scheduler_leader",
        "Scheduler dispatches": "job_scheduler_dispatches_total",
        "In flight per worker": "job_runs_in_flight",
    }
    for title, metric in wanted.items():
        assert metric in by_title.get(title, ""), f"no {title!r} panel reading {metric}"
    assert "by (outcome)" in by_title["Throughput by outcome"]
    assert "by (pod)" in by_title["In flight per worker"]
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids)), "panel ids are unique"


def test_every_metric_in_the_docs_catalog_is_one_the_runtime_exports() -> None:
    documented = set(
        re.findall(r"^\| `(job_[a-z_]+)` \|", (ROOT / "docs" / "metrics.md").read_text(), re.M)
    )
    exported = _exported()
    assert documented <= set(exported), documented - set(exported)
