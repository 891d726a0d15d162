"""A DurableJob's worker Deployment (``ROLE=worker``), as a pure function of the resource."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ferry_operator.autoscale import desired_replicas
from ferry_operator.names import (
    API_VERSION,
    COMPONENT,
    DURABLE_JOB_LABEL,
    FIELD_MANAGER,
    MANAGED_BY,
)
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


def job_queue(body: Mapping[str, Any]) -> str:
    """The one queue a DurableJob's workers poll (``spec.queue``), where its runs must go."""
    return str(body["spec"].get("queue") or "default")


def worker_name(body: Mapping[str, Any]) -> str:
    """The name of a DurableJob's worker Deployment, Service and PodDisruptionBudget."""
    return f"{body['metadata']['name']}-worker"


def worker_selector(body: Mapping[str, Any]) -> str:
    """The worker pods' label selector as a string: ``status.selector``, which the scale
    subresource hands to ``kubectl scale`` and a HorizontalPodAutoscaler."""
    labels = worker_labels(body["metadata"]["name"])
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items()))


def _metadata(body: Mapping[str, Any]) -> Manifest:
    labels = {
        **worker_labels(body["metadata"]["name"]),
        MANAGED_BY: FIELD_MANAGER,
        "app.kubernetes.io/name": "ferry",
    }
    return {
        "name": worker_name(body),
        "namespace": body["metadata"]["namespace"],
        "labels": labels,
        "ownerReferences": [owner_reference(body, controller=True)],
    }


def worker_deployment(body: Mapping[str, Any]) -> Manifest:
    """The Deployment running a DurableJob's queue: ``replicas`` × ``ferry run`` as a worker."""
    spec = body["spec"]
    drain = int(spec.get("drainSeconds", DEFAULT_DRAIN_SECONDS))
    metadata = _metadata(body)
    selector = worker_labels(body["metadata"]["name"])
    env = [
        {"name": "ROLE", "value": "worker"},
        {"name": "FERRY_APP", "value": spec["handler"]},
        database_env(spec),
        {"name": "QUEUES", "value": job_queue(body)},
        {"name": "CONCURRENCY", "value": str(spec.get("concurrency", DEFAULT_CONCURRENCY))},
        {"name": "DRAIN_SECONDS", "value": str(drain)},
    ]
    template = pod_template(
        spec=spec, labels=metadata["labels"], selector=selector, env=env, drain_seconds=drain
    )
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {
            "replicas": desired_replicas(body),
            "selector": {"matchLabels": selector},
            "template": template,
        },
    }


def worker_disruption_budget(body: Mapping[str, Any]) -> Manifest:
    """How many workers a voluntary disruption (a node drain) may evict at once.

    A draining worker finishes or hands back its jobs within its grace period, so evicting
    one is safe; evicting all at once stops the queue. ``AlwaysAllow`` lets a drain evict a
    worker that is not ready anyway (crash-looping), which would otherwise block it.
    """
    budget = (body["spec"].get("disruptionBudget") or {}).get("maxUnavailable", 1)
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": _metadata(body),
        "spec": {
            "maxUnavailable": budget,
            "selector": {"matchLabels": worker_labels(body["metadata"]["name"])},
            "unhealthyPodEvictionPolicy": "AlwaysAllow",
        },
    }
