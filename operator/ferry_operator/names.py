"""Names the operator and the chart agree on: the API group, labels, the field manager."""

from __future__ import annotations

from typing import Final

GROUP: Final = "ferry.dev"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
FIELD_MANAGER: Final = "ferry-operator"

MANAGED_BY: Final = "app.kubernetes.io/managed-by"
OWNED_SELECTOR: Final = f"{MANAGED_BY}={FIELD_MANAGER}"
"""What every object the operator writes carries: the server-side filter of its Deployment
watch, and the first half of the test before it deletes anything."""
COMPONENT: Final = "app.kubernetes.io/component"
PART_OF: Final = "app.kubernetes.io/part-of"
"""On the metrics Services: what the chart's ServiceMonitor selects them by."""
DURABLE_JOB_LABEL: Final = "ferry.dev/durablejob"

LEASE_SELECTOR: Final = "app.kubernetes.io/name=ferry,app.kubernetes.io/component=operator-leader"
"""The labels of every ferry operator's leader Lease, whatever its release."""
WATCH_SCOPE_LABEL: Final = "ferry.dev/watch"
"""On the leader Lease: ``cluster`` or ``namespaces`` (what the release reconciles)."""
WATCH_NAMESPACES_ANNOTATION: Final = "ferry.dev/watch-namespaces"

SCHEDULER_NAME: Final = "ferry-scheduler"
TASKS_CONFIGMAP: Final = "ferry-scheduler-tasks"
TASKS_KEY: Final = "tasks.json"
TASKS_MOUNT: Final = "/etc/ferry/tasks"
TASKS_FILE: Final = f"{TASKS_MOUNT}/{TASKS_KEY}"
TASKS_DIGEST: Final = "ferry.dev/tasks-sha256"

LIVENESS_PATH: Final = "/livez"
"""Served on METRICS_PORT by ``ferry._metrics.server``: fails when the event loop is wedged."""

DRAIN_MARGIN_SECONDS: Final = 15
"""Grace beyond the drain budget: interpreter exit, lease release, the last log line."""

SCHEDULER_DRAIN_SECONDS: Final = 10
"""A scheduler drains one dispatch round (tick 1 s) and deletes its lease row."""

OPERATOR_SET_ENV: Final = (
    "ROLE",
    "FERRY_APP",
    "DATABASE_URL",
    "METRICS_PORT",
    "CONCURRENCY",
    "DRAIN_SECONDS",
    "QUEUES",
    "FERRY_TASKS_APP",
    "FERRY_TASKS_FILE",
)
