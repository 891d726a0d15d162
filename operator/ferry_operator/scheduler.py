"""A namespace's scheduler: the task-file ConfigMap and the Deployment (``ROLE=scheduler``).

The task set reaches the scheduler as a mounted ConfigMap that ``ferry.scheduler_config``
loads at start. The pod template carries the file's digest, so a task change rolls the two
scheduler pods: each drains (finishes its round, deletes the lease row) and the other
promotes; last-tick state lives in Postgres, so an occurrence due meanwhile fires late
rather than never, and its occurrence-scoped idempotency key absorbs any second fire.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ferry_operator.names import (
    COMPONENT,
    FIELD_MANAGER,
    MANAGED_BY,
    SCHEDULER_DRAIN_SECONDS,
    SCHEDULER_NAME,
    TASKS_CONFIGMAP,
    TASKS_DIGEST,
    TASKS_FILE,
    TASKS_KEY,
    TASKS_MOUNT,
)
from ferry_operator.pods import Manifest, database_env, pod_template
from ferry_operator.schedule import SchedulerPlan
from ferry_operator.worker import owner_reference

SCHEDULER_REPLICAS = 2
"""Leader + warm standby: the standby bids for the lease row every round. The pod template
spreads the two over nodes and zones, so one node's loss never takes both."""


def scheduler_labels() -> dict[str, str]:
    """The scheduler pods' selector labels (one scheduler per namespace)."""
    return {COMPONENT: "scheduler", "app.kubernetes.io/instance": SCHEDULER_NAME}


def _labels() -> dict[str, str]:
    return {**scheduler_labels(), MANAGED_BY: FIELD_MANAGER, "app.kubernetes.io/name": "ferry"}


def _metadata(name: str, namespace: str, plan: SchedulerPlan) -> Manifest:
    # Every accepted task and every DurableJob it measures owns the scheduler; it is
    # garbage-collected with the last of them.
    return {
        "name": name,
        "namespace": namespace,
        "labels": _labels(),
        "ownerReferences": [
            owner_reference(owner, controller=False) for owner in (*plan.owners, *plan.measured)
        ],
    }


def tasks_configmap(namespace: str, plan: SchedulerPlan) -> Manifest:
    """The ConfigMap holding the task file the scheduler loads."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _metadata(TASKS_CONFIGMAP, namespace, plan),
        "data": {TASKS_KEY: _task_file(plan)},
    }


def _task_file(plan: SchedulerPlan) -> str:
    return json.dumps(plan.document(), indent=2, sort_keys=True)


def scheduler_deployment(namespace: str, plan: SchedulerPlan) -> Manifest:
    """Two scheduler pods running the source DurableJob's image and app over the task file."""
    if plan.source is None:
        raise ValueError("a scheduler needs the DurableJob whose app it runs")
    spec: dict[str, Any] = {**plan.source["spec"]}
    labels = _labels()
    env = [
        {"name": "ROLE", "value": "scheduler"},
        # The app with its tasks replaced by the namespace's ScheduledTasks.
        {"name": "FERRY_APP", "value": "ferry.scheduler_config:api"},
        {"name": "FERRY_TASKS_APP", "value": spec["handler"]},
        {"name": "FERRY_TASKS_FILE", "value": TASKS_FILE},
        database_env(spec),
    ]
    template = pod_template(
        spec=spec,
        labels=labels,
        selector=scheduler_labels(),
        env=env,
        drain_seconds=SCHEDULER_DRAIN_SECONDS,
        volumes=[{"name": "tasks", "configMap": {"name": TASKS_CONFIGMAP}}],
        mounts=[{"name": "tasks", "mountPath": TASKS_MOUNT, "readOnly": True}],
    )
    digest = hashlib.sha256(_task_file(plan).encode()).hexdigest()
    template["metadata"].setdefault("annotations", {})[TASKS_DIGEST] = digest
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(SCHEDULER_NAME, namespace, plan),
        "spec": {
            "replicas": SCHEDULER_REPLICAS,
            "selector": {"matchLabels": scheduler_labels()},
            "template": template,
        },
    }


def scheduler_disruption_budget(namespace: str, plan: SchedulerPlan) -> Manifest:
    """At most one scheduler pod evicted at a time: a drain never takes leader and standby."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": _metadata(SCHEDULER_NAME, namespace, plan),
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": scheduler_labels()}},
    }
