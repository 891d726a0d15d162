"""Scaling a DurableJob like any workload: ``kubectl scale dj``, the scale subresource, an HPA;
and how long the operator takes to carry a DurableJob change to its Deployment (measured,
printed, never asserted)."""

from __future__ import annotations

import json
import statistics
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
from control_plane import ControlPlane
from e2e_helpers import namespace_with_worker
from operator_process import Fleet
from support.waiting import eventually_blocking

NAMESPACE = "ferry-scale"


@pytest.fixture(scope="module")
def digest(control_plane: ControlPlane, operator: Fleet) -> Iterator[str]:
    with namespace_with_worker(control_plane, NAMESPACE, "digest") as job:
        yield job


def _deployment(plane: ControlPlane) -> Any:
    return plane.get("deployment", "-n", NAMESPACE, "digest-worker")


def test_kubectl_scale_dj_scales_the_worker_deployment(
    control_plane: ControlPlane, digest: str
) -> None:
    scaled = control_plane.kubectl("scale", "dj", digest, "-n", NAMESPACE, "--replicas=3")
    assert "durablejob.ferry.dev/digest scaled" in scaled
    eventually_blocking(
        lambda: _deployment(control_plane)["spec"]["replicas"] == 3, what="3 worker replicas"
    )


def test_the_scale_subresource_reports_replicas_and_the_worker_selector(
    control_plane: ControlPlane, digest: str
) -> None:
    path = f"/apis/ferry.dev/v1alpha1/namespaces/{NAMESPACE}/durablejobs/{digest}/scale"
    control_plane.kubectl("scale", "dj", digest, "-n", NAMESPACE, "--replicas=2")

    def scale() -> dict[str, Any] | None:
        found = json.loads(control_plane.kubectl("get", "--raw", path))
        # status.replicas is what the worker Deployment has, once the operator wrote it.
        return found if found["status"].get("replicas") == 2 else None

    found = eventually_blocking(scale, what="scale status of 2 replicas")
    assert found["kind"] == "Scale" and found["spec"]["replicas"] == 2
    selected = control_plane.get("pods", "-n", NAMESPACE, "-l", found["status"]["selector"])
    assert len(selected["items"]) == 2  # the selector picks exactly the worker pods


def test_a_horizontal_pod_autoscaler_can_drive_a_durable_job(
    control_plane: ControlPlane, digest: str
) -> None:
    """No metrics server runs here, so the HPA cannot compute a target; what it proves is that
    it reads the DurableJob through the scale subresource (AbleToScale=True). The controller
    manager refreshes its view of the API's kinds every 30 s, so a CRD younger than that may
    first answer FailedGetScale."""
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": digest, "namespace": NAMESPACE},
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "ferry.dev/v1alpha1",
                "kind": "DurableJob",
                "name": digest,
            },
            "minReplicas": 1,
            "maxReplicas": 5,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 80},
                    },
                }
            ],
        },
    }
    control_plane.kubectl("apply", "-f", "-", stdin=json.dumps(hpa))

    def able() -> dict[str, Any] | None:
        found = control_plane.get("hpa", "-n", NAMESPACE, digest)
        conditions = (found.get("status") or {}).get("conditions") or []
        return next(
            (c for c in conditions if c["type"] == "AbleToScale" and c["status"] == "True"), None
        )

    condition = eventually_blocking(able, what="the HPA's AbleToScale=True", within_s=120)
    assert condition["reason"] == "SucceededGetScale"
    control_plane.kubectl("delete", "hpa", digest, "-n", NAMESPACE)


def test_reconcile_latency_of_a_durable_job_change_is_measured(
    control_plane: ControlPlane, digest: str
) -> None:
    """Budget: 5 edits of spec.concurrency. Each is timed from the `kubectl patch` returning to
    a watch on the Deployment delivering the new env. Printed, not asserted."""
    latencies = []
    for concurrency in range(11, 16):
        watch = subprocess.Popen(
            [
                str(control_plane.tools / "kubectl"),
                "get",
                "deployment",
                "digest-worker",
                "-n",
                NAMESPACE,
                "--watch",
                "--output-watch-events",
                "--request-timeout=60s",  # bounds the wait: the watch ends, the test fails
                "-o",
                "json",
            ],
            env=control_plane.env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert watch.stdout is not None
            _next_event(watch.stdout)  # the current state: the watch is established
            started = time.monotonic()
            control_plane.kubectl(
                "patch",
                "dj",
                digest,
                "-n",
                NAMESPACE,
                "--type=merge",
                "-p",
                json.dumps({"spec": {"concurrency": concurrency}}),
            )
            latencies.append(_until_env(watch.stdout, "CONCURRENCY", str(concurrency)) - started)
        finally:
            watch.terminate()
            watch.wait()
    print(
        f"\nDurableJob edit -> worker Deployment updated: median "
        f"{statistics.median(latencies) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms "
        f"over {len(latencies)} edits"
    )


def _next_event(stream: Any) -> dict[str, Any]:
    """The next watch event (kubectl prints each as indented JSON over many lines)."""
    buffer = ""
    for line in stream:
        buffer += line
        try:
            event: dict[str, Any] = json.loads(buffer)
        except ValueError:
            continue
        return event
    raise AssertionError("the watch ended")


def _until_env(stream: Any, name: str, value: str) -> float:
    """Read watch events until the container env has ``name=value``; the time it arrived."""
    while True:
        event = _next_event(stream)
        [container] = event["object"]["spec"]["template"]["spec"]["containers"]
        if {"name": name, "value": value} in container["env"]:
            return time.monotonic()
