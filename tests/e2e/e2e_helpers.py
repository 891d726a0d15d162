"""Helpers the e2e tests share: resources to apply and reading them back (waits:
``support.waiting``)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from control_plane import REPO, ControlPlane
from support.waiting import eventually_blocking

T = TypeVar("T")


def condition(body: dict[str, Any] | None, kind: str) -> dict[str, Any] | None:
    """A resource's status condition of type ``kind``, or ``None``."""
    conditions = ((body or {}).get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == kind), None)


def with_reason(
    plane: ControlPlane, kind: str, namespace: str, name: str, reason: str
) -> dict[str, Any]:
    """The resource once its Ready condition carries ``reason`` (a bounded wait)."""

    def settled() -> dict[str, Any] | None:
        body = plane.get(kind, "-n", namespace, name)
        ready = condition(body, "Ready")
        return body if ready and ready["reason"] == reason else None

    found: dict[str, Any] = eventually_blocking(
        settled, what=f"{kind} {namespace}/{name}: {reason}"
    )
    return found


def events_of(plane: Any, namespace: str, name: str) -> list[dict[str, Any]]:
    """The events posted about the object ``name`` in ``namespace``, oldest first."""
    listed = plane.get("events", "-n", namespace, "--field-selector", f"involvedObject.name={name}")
    return sorted(listed["items"], key=lambda e: e["metadata"]["creationTimestamp"])


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    """A container's env as ``{name: value or valueFrom}``."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def example(name: str) -> Path:
    return REPO / "examples" / "k8s" / name


IMAGE = "ghcr.io/ferry-dev/ferry:0.1.0"
HANDLER = "examples.demo.app:api"


def resource(kind: str, name: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A ferry custom resource (``DurableJob`` or ``ScheduledTask``)."""
    return {
        "apiVersion": "ferry.dev/v1alpha1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def durable_job(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    """A DurableJob of the demo app: the image and handler, and whatever ``spec`` adds."""
    return resource("DurableJob", name, namespace, {"image": IMAGE, "handler": HANDLER, **spec})


def secret(name: str, namespace: str, url: str = "postgresql://db/ferry") -> dict[str, Any]:
    """A database Secret (key ``url``)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "stringData": {"url": url},
    }


def apply(plane: ControlPlane, *bodies: dict[str, Any]) -> None:
    """``kubectl apply`` each body."""
    for body in bodies:
        plane.kubectl("apply", "-f", "-", stdin=json.dumps(body))


@contextlib.contextmanager
def namespace_with_worker(plane: ControlPlane, namespace: str, job: str) -> Iterator[str]:
    """A namespace holding the DurableJob ``job``, once its worker Deployment exists; the
    namespace is deleted afterwards."""
    plane.kubectl("create", "namespace", namespace)
    apply(plane, durable_job(job, namespace))
    eventually_blocking(
        lambda: plane.get("deployment", "-n", namespace, f"{job}-worker"), what=f"{job}-worker"
    )
    try:
        yield job
    finally:
        plane.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def restricted_namespace(name: str) -> dict[str, Any]:
    """A Namespace enforcing Pod Security ``restricted``, as the operator's pods must meet."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"pod-security.kubernetes.io/enforce": "restricted"}},
    }


def minutely_digest(namespace: str, *, image: str, dsn: str, **worker: Any) -> list[dict[str, Any]]:
    """The demo scheduled every minute: a restricted namespace, the database Secret ``db``,
    the DurableJob ``send-digest`` (``worker`` adds spec fields) and the ScheduledTask
    ``every-minute`` firing it."""
    job = {
        "image": image,
        "handler": HANDLER,
        "job": "send_digest",
        "databaseSecretRef": {"name": "db"},
    }
    task = {
        "cron": "* * * * *",
        "timeZone": "UTC",
        "entries": [{"job": "send-digest", "input": {"occurrence_ms": 0}}],
    }
    return [
        restricted_namespace(namespace),
        secret("db", namespace, dsn),
        resource("DurableJob", "send-digest", namespace, {**job, **worker}),
        resource("ScheduledTask", "every-minute", namespace, task),
    ]


def kubelet_reports(
    plane: ControlPlane, namespace: str, selector: str, status: dict[str, Any]
) -> list[str]:
    """Write ``status`` on every pod ``selector`` matches, as a kubelet would (this control
    plane has none, so its pods never leave Pending by themselves); the pods' names.

    What the operator then reads is the API server's pod, through its watch and its RBAC;
    tests/node shows the same reasons from a real kubelet.
    """

    def pods() -> list[str]:
        listed = plane.get("pods", "-n", namespace, "-l", selector)
        return [pod["metadata"]["name"] for pod in (listed or {"items": []})["items"]]

    names: list[str] = eventually_blocking(pods, what=f"pods {selector} in {namespace}")
    for name in names:
        plane.kubectl(
            "patch",
            "pod",
            name,
            "-n",
            namespace,
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps({"status": status}),
        )
    return names


def ready_pod_status() -> dict[str, Any]:
    """A running pod whose one container is ready, as the kubelet reports it."""
    return {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [
            {
                "name": "ferry",
                "image": IMAGE,
                "imageID": "",
                "ready": True,
                "restartCount": 0,
                "started": True,
                "state": {"running": {"startedAt": "2026-06-01T12:00:00Z"}},
            }
        ],
    }
