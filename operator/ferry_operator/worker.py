"""A DurableJob's worker Deployment (``ROLE=worker``), as a pure function of the resource."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ferry_operator.names import API_VERSION, COMPONENT, DURABLE_JOB_LABEL, MANAGED_BY
from ferry_operator.pods import Manifest, database_env, pod_template

DEFAULT_DRAIN_SECONDS = 30
DEFAULT_CONCURRENCY = 10


def owner_reference(body: Mapping[str, Any], *, controller: bool) -> Manifest:
    """An ownerReference to a ferry resource, so deleting it garbage-collects the Deployment."""
    return {
        "apiVersion": API_VERSION,
        "kind": body["kind"],
        "name": body["metadata"]["name"],
        "uid": body["metadata"]["uid"],
        "controller": controller,
    }


def worker_labels(name: str) -> dict[str, str]:
    """The selector labels of a DurableJob's pods (immutable once the Deployment exists)."""
    return {DURABLE_JOB_LABEL: name, COMPONENT: "worker"}


def job_name(body: Mapping[str, Any]) -> str:
    """The job's name in the app: ``spec.job``, else the resource's name."""
    return str(body["spec"].get("job") or body["metadata"]["name"])


def worker_deployment(body: Mapping[str, Any]) -> Manifest:
    """The Deployment running a DurableJob's queue: ``replicas`` × ``ferry run`` as a worker."""
    meta, spec = body["metadata"], body["spec"]
    name = meta["name"]
    drain = int(spec.get("drainSeconds", DEFAULT_DRAIN_SECONDS))
    selector = worker_labels(name)
    labels = {**selector, MANAGED_BY: "ferry-operator", "app.kubernetes.io/name": "ferry"}
    env = [
        {"name": "ROLE", "value": "worker"},
        {"name": "FERRY_APP", "value": spec["handler"]},
        database_env(spec),
        {"name": "QUEUES", "value": spec.get("queue", "default")},
        {"name": "CONCURRENCY", "value": str(spec.get("concurrency", DEFAULT_CONCURRENCY))},
        {"name": "DRAIN_SECONDS", "value": str(drain)},
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": f"{name}-worker",
            "namespace": meta["namespace"],
            "labels": labels,
            "ownerReferences": [owner_reference(body, controller=True)],
        },
        "spec": {
            "replicas": int(spec.get("replicas", 1)),
            "selector": {"matchLabels": selector},
            "template": pod_template(spec=spec, labels=labels, env=env, drain_seconds=drain),
        },
    }
