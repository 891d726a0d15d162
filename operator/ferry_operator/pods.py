"""The pod template every ferry Deployment shares: probes, pod security, env, overrides.

Pure functions of a DurableJob's spec; the worker and the scheduler Deployment differ only
in role, env and volumes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ferry_operator.config import DatabaseRef
from ferry_operator.names import DRAIN_MARGIN_SECONDS, LIVENESS_PATH

Manifest = dict[str, Any]
Spec = Mapping[str, Any]

DEFAULT_METRICS_PORT = 9090
DEFAULT_RESOURCES: Manifest = {
    "requests": {"cpu": "100m", "memory": "128Mi"},
    "limits": {"memory": "512Mi"},
}
RUN_AS = 10001
"""The image's non-root user (see the Dockerfile)."""


def metrics_port(spec: Spec) -> int:
    """The port ``/metrics`` and the liveness path are served on."""
    return int(spec.get("metricsPort", DEFAULT_METRICS_PORT))


def grace_period(drain_seconds: int) -> int:
    """``terminationGracePeriodSeconds``: the drain budget plus a margin to exit in."""
    return drain_seconds + DRAIN_MARGIN_SECONDS


def with_database_default(body: Mapping[str, Any], default: DatabaseRef) -> Manifest:
    """The DurableJob with its database Secret resolved: its own ``databaseSecretRef``, else
    the chart's default (the same Secret name in every namespace)."""
    spec = dict(body["spec"])
    own = spec.get("databaseSecretRef")
    spec["databaseSecretRef"] = (
        {"key": "url", **own} if own else {"name": default.name, "key": default.key}
    )
    return {**body, "spec": spec}


def database_ref(spec: Spec) -> DatabaseRef:
    """The Secret key a resolved spec reads ``DATABASE_URL`` from."""
    ref = spec["databaseSecretRef"]
    return DatabaseRef(name=ref["name"], key=ref.get("key", "url"))


def database_env(spec: Spec) -> Manifest:
    """``DATABASE_URL`` from the existing Secret the spec names (never copied in clear)."""
    ref = database_ref(spec)
    return {
        "name": "DATABASE_URL",
        "valueFrom": {"secretKeyRef": {"name": ref.name, "key": ref.key}},
    }


def spread(selector: Mapping[str, str]) -> list[Manifest]:
    """Spread a Deployment's pods over nodes and zones, preferably.

    ``ScheduleAnyway``: a one-node cluster still runs both schedulers, a spread one keeps a
    node loss from taking leader and standby together. ``pod-template-hash`` keeps a rollout's
    outgoing pods from counting against the incoming ones.
    """
    return [
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": dict(selector)},
            "matchLabelKeys": ["pod-template-hash"],
        }
        for key in ("kubernetes.io/hostname", "topology.kubernetes.io/zone")
    ]


def probes(port: int) -> Manifest:
    """Startup and liveness on the metrics port's loop-aware path.

    The startup probe gives migrations and imports a minute before liveness counts; liveness
    then restarts a pod whose event loop stopped turning, not only one whose port closed.
    """
    action = {"httpGet": {"path": LIVENESS_PATH, "port": "metrics"}}
    return {
        "startupProbe": {**action, "periodSeconds": 2, "failureThreshold": 30, "timeoutSeconds": 2},
        "livenessProbe": {
            **action,
            "periodSeconds": 10,
            "failureThreshold": 3,
            "timeoutSeconds": 2,
        },
        "ports": [{"name": "metrics", "containerPort": port, "protocol": "TCP"}],
    }


def container_security() -> Manifest:
    """The container half of Pod Security ``restricted``."""
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
    }


def pod_security() -> Manifest:
    """The pod half of Pod Security ``restricted``."""
    return {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS,
        "runAsGroup": RUN_AS,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def pod_template(
    *,
    spec: Spec,
    labels: Mapping[str, str],
    selector: Mapping[str, str],
    env: Sequence[Manifest],
    drain_seconds: int,
    volumes: Sequence[Manifest] = (),
    mounts: Sequence[Manifest] = (),
) -> Manifest:
    """A ferry pod running ``ferry run`` from the spec's image, with the spec's overrides,
    spread over nodes and zones among the pods ``selector`` matches."""
    pod = spec.get("pod") or {}
    port = metrics_port(spec)
    container: Manifest = {
        "name": "ferry",
        "image": spec["image"],
        "command": ["ferry", "run"],
        "env": [*env, {"name": "METRICS_PORT", "value": str(port)}, *spec.get("env", [])],
        **probes(port),
        "resources": spec.get("resources") or DEFAULT_RESOURCES,
        "securityContext": container_security(),
        # A role that refuses to run writes its X_* refusal to /dev/termination-log; a crash
        # that writes nothing there leaves the tail of its log instead. Either way the pod's
        # last state says why, and the operator names it on the resource.
        "terminationMessagePolicy": "FallbackToLogsOnError",
        # readOnlyRootFilesystem: Python's tempfile needs somewhere writable.
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}, *mounts],
    }
    pod_spec: Manifest = {
        "containers": [container],
        "terminationGracePeriodSeconds": grace_period(drain_seconds),
        "securityContext": pod_security(),
        "volumes": [{"name": "tmp", "emptyDir": {}}, *volumes],
        "topologySpreadConstraints": spread(selector),
    }
    for field in (
        "nodeSelector",
        "tolerations",
        "affinity",
        "serviceAccountName",
        "priorityClassName",
        "imagePullSecrets",
    ):
        if pod.get(field):
            pod_spec[field] = pod[field]
    metadata: Manifest = {"labels": {**pod.get("labels", {}), **labels}}
    if pod.get("annotations"):
        metadata["annotations"] = dict(pod["annotations"])
    return {"metadata": metadata, "spec": pod_spec}
