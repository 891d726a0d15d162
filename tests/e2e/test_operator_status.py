"""What the operator tells a user about their resources: kstatus conditions with the
generation they describe, specific reasons, and Normal and Warning events on both kinds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from control_plane import ControlPlane
from e2e_helpers import (
    HANDLER,
    IMAGE,
    apply,
    condition,
    events_of,
    kubelet_reports,
    ready_pod_status,
    resource,
    secret,
    with_reason,
)
from operator_process import Fleet
from support.waiting import eventually_blocking

NAMESPACE = "ferry-status"


@pytest.fixture(scope="module")
def namespace(control_plane: ControlPlane, operator: Fleet) -> Iterator[str]:
    control_plane.kubectl("create", "namespace", NAMESPACE)
    yield NAMESPACE
    control_plane.kubectl("delete", "namespace", NAMESPACE, "--wait=false", check=False)


def _apply(plane: ControlPlane, kind: str, name: str, spec: dict[str, Any]) -> None:
    body = secret(name, NAMESPACE) if kind == "Secret" else resource(kind, name, NAMESPACE, spec)
    apply(plane, body)


def _verdict(plane: ControlPlane, kind: str, name: str, reason: str) -> dict[str, Any]:
    return with_reason(plane, kind, NAMESPACE, name, reason)


def _events(plane: ControlPlane, name: str, reason: str) -> list[dict[str, Any]]:
    return eventually_blocking(
        lambda: [e for e in events_of(plane, NAMESPACE, name) if e["reason"] == reason],
        what=f"event {reason} on {name}",
    )


MINIMAL = {"image": IMAGE, "handler": HANDLER}


def test_a_durable_job_without_a_secret_ref_reads_the_default_secret_and_says_when_it_is_missing(
    control_plane: ControlPlane, operator: Fleet, namespace: str
) -> None:
    """The minimal DurableJob is accepted; its workers read the chart's default Secret; while
    that Secret is missing the job is Stalled with SecretNotFound and a Warning event naming
    the Secret and the fix; once it exists the job goes back to converging, announced."""
    _apply(control_plane, "DurableJob", "minimal", MINIMAL)
    job = _verdict(control_plane, "durablejob", "minimal", "SecretNotFound")
    deployment = control_plane.get("deployment", "-n", namespace, "minimal-worker")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    [url] = [e for e in container["env"] if e["name"] == "DATABASE_URL"]
    assert url["valueFrom"] == {"secretKeyRef": {"name": "ferry-database", "key": "url"}}
    stalled = condition(job, "Stalled")
    assert stalled and stalled["status"] == "True" and stalled["reason"] == "SecretNotFound"
    [warning] = _events(control_plane, "minimal", "SecretNotFound")
    assert warning["type"] == "Warning"
    assert 'Secret "ferry-database"' in warning["message"]
    assert f"kubectl -n {namespace} create secret generic ferry-database" in warning["message"]
    assert warning["reportingInstance"] == operator.leader().identity

    _apply(control_plane, "Secret", "ferry-database", {})
    # Nothing watches Secrets (the operator may only read their metadata by name): the
    # periodic refresh notices within a minute; a change to the DurableJob does at once.
    control_plane.kubectl("annotate", "dj", "minimal", "-n", namespace, "touched=1")
    job = _verdict(control_plane, "durablejob", "minimal", "WorkersStarting")
    stalled = condition(job, "Stalled")
    assert stalled and stalled["status"] == "False"
    [normal] = _events(control_plane, "minimal", "WorkersStarting")
    assert normal["type"] == "Normal"


def test_a_named_secret_that_does_not_exist_is_reported_by_name(
    control_plane: ControlPlane, namespace: str
) -> None:
    _apply(control_plane, "DurableJob", "named", {**MINIMAL, "databaseSecretRef": {"name": "nope"}})
    job = _verdict(control_plane, "durablejob", "named", "SecretNotFound")
    ready = condition(job, "Ready")
    assert ready and 'Secret "nope" (from spec.databaseSecretRef)' in ready["message"]


def test_every_condition_names_the_generation_it_describes(
    control_plane: ControlPlane, namespace: str
) -> None:
    _apply(control_plane, "Secret", "db", {})
    spec = {**MINIMAL, "databaseSecretRef": {"name": "db"}}
    _apply(control_plane, "DurableJob", "generations", spec)
    _verdict(control_plane, "durablejob", "generations", "WorkersStarting")
    _apply(control_plane, "DurableJob", "generations", {**spec, "concurrency": 3})

    def observed() -> dict[str, Any] | None:
        body = control_plane.get("durablejob", "-n", namespace, "generations")
        status = body.get("status") or {}
        generation = body["metadata"]["generation"]
        current = generation == 2 and status.get("observedGeneration") == generation
        return body if current else None

    job = eventually_blocking(observed, what="status of generation 2")
    conditions = job["status"]["conditions"]
    assert sorted(c["type"] for c in conditions) == ["Ready", "Reconciling", "Stalled"]
    assert {c["observedGeneration"] for c in conditions} == {2}


def test_scheduled_tasks_get_specific_reasons_and_events_of_both_types(
    control_plane: ControlPlane, namespace: str
) -> None:
    """A refused task is Stalled with the reason a person fixes (cron and zone judged before
    references), a Warning event, and the runtime's X_ code in the message; fixed, it is
    Scheduled and announced with a Normal event."""
    _apply(control_plane, "Secret", "db", {})
    _apply(control_plane, "DurableJob", "digest", {**MINIMAL, "databaseSecretRef": {"name": "db"}})
    task = {"cron": "0 3 * * *", "timeZone": "Mars/Olympus", "entries": [{"job": "missing"}]}
    _apply(control_plane, "ScheduledTask", "nightly", task)
    zone = condition(_verdict(control_plane, "st", "nightly", "InvalidTimeZone"), "Ready")
    assert zone and zone["message"].startswith("X_INVARIANT: ")

    _apply(control_plane, "ScheduledTask", "nightly", {**task, "timeZone": "Europe/Berlin"})
    missing = condition(_verdict(control_plane, "st", "nightly", "JobNotFound"), "Ready")
    assert missing and "set spec.entries[0].job to one of: digest" in missing["message"]

    _apply(control_plane, "ScheduledTask", "nightly", {**task, "cron": "61 3 * * *"})
    _verdict(control_plane, "st", "nightly", "InvalidCron")

    fixed = {**task, "timeZone": "Europe/Berlin", "entries": [{"job": "digest"}]}
    _apply(control_plane, "ScheduledTask", "nightly", fixed)
    # Accepted: it waits for a scheduler pod, then is Ready.
    starting = _verdict(control_plane, "st", "nightly", "SchedulerStarting")
    assert starting["status"]["nextFire"].endswith(("+01:00", "+02:00"))
    kubelet_reports(
        control_plane, namespace, "app.kubernetes.io/component=scheduler", ready_pod_status()
    )
    scheduled = _verdict(control_plane, "st", "nightly", "Scheduled")
    assert scheduled["status"]["nextFire"].endswith(("+01:00", "+02:00"))
    reasons = [(e["type"], e["reason"]) for e in _events(control_plane, "nightly", "Scheduled")]
    assert reasons == [("Normal", "Scheduled")]
    warnings = {
        e["reason"]
        for e in events_of(control_plane, namespace, "nightly")
        if e["type"] == "Warning"
    }
    assert warnings == {"InvalidTimeZone", "JobNotFound", "InvalidCron"}
    printed = control_plane.kubectl("get", "st", "nightly", "-n", namespace)
    assert "REASON" in printed.splitlines()[0] and "Scheduled" in printed


def test_a_durable_job_gets_normal_events_as_it_converges(
    control_plane: ControlPlane, namespace: str
) -> None:
    _apply(control_plane, "Secret", "db", {})
    _apply(control_plane, "DurableJob", "events", {**MINIMAL, "databaseSecretRef": {"name": "db"}})
    _verdict(control_plane, "durablejob", "events", "WorkersStarting")
    posted = [(e["type"], e["reason"]) for e in events_of(control_plane, namespace, "events")]
    assert ("Normal", "WorkersStarting") in posted
    assert all(kind == "Normal" for kind, _ in posted)
    control_plane.kubectl("scale", "dj", "events", "-n", namespace, "--replicas=2")
    [scaled] = _events(control_plane, "events", "Scaled")
    assert (scaled["type"], scaled["message"]) == ("Normal", "workers scaled from 1 to 2")


def test_a_crash_looping_worker_names_the_roles_refusal_on_the_durable_job(
    control_plane: ControlPlane, namespace: str
) -> None:
    """The pod's last termination message (what the role wrote to /dev/termination-log)
    reaches the DurableJob's Ready condition and a Warning event, with no progress deadline
    waited for; once the pods are ready the job is Ready again."""
    _apply(control_plane, "Secret", "db", {})
    _apply(
        control_plane, "DurableJob", "crashing", {**MINIMAL, "databaseSecretRef": {"name": "db"}}
    )
    _verdict(control_plane, "durablejob", "crashing", "WorkersStarting")
    refusal = (
        "X_DB_UNREACHABLE: cannot connect to the database at postgresql://app:***@db/ferry: "
        'InvalidPasswordError: password authentication failed for user "app"'
    )
    crashed = {
        "name": "ferry",
        "image": IMAGE,
        "imageID": "",
        "ready": False,
        "restartCount": 2,
        "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s"}},
        "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "message": refusal}},
    }
    selector = "ferry.dev/durablejob=crashing"
    kubelet_reports(
        control_plane, namespace, selector, {"phase": "Running", "containerStatuses": [crashed]}
    )
    job = _verdict(control_plane, "durablejob", "crashing", "WorkersCrashLooping")
    ready = condition(job, "Ready")
    assert ready and ready["status"] == "False" and refusal in ready["message"]
    [warning] = _events(control_plane, "crashing", "WorkersCrashLooping")
    assert warning["type"] == "Warning" and "password authentication failed" in warning["message"]
    printed = control_plane.kubectl("get", "dj", "crashing", "-n", namespace)
    assert "WorkersCrashLooping" in printed

    kubelet_reports(control_plane, namespace, selector, ready_pod_status())
    _verdict(control_plane, "durablejob", "crashing", "WorkersReady")


def test_an_autoscaled_durable_job_gets_a_measuring_scheduler_and_waits_for_its_backlog(
    control_plane: ControlPlane, operator: Fleet
) -> None:
    """With spec.autoscaling and no ScheduledTask, the namespace still gets its scheduler —
    an empty task file, owned by the DurableJob — since its leader is what measures the
    queue. No scheduler pod runs on this control plane, so nothing is measured: the workers
    stay at minReplicas and the status says why; spec.replicas is ignored."""
    scaled_ns = "ferry-autoscaled"
    control_plane.kubectl("create", "namespace", scaled_ns)
    try:
        spec = {
            **MINIMAL,
            "databaseSecretRef": {"name": "db"},
            "replicas": 5,
            "autoscaling": {"minReplicas": 1, "maxReplicas": 4},
        }
        apply(
            control_plane,
            secret("db", scaled_ns),
            resource("DurableJob", "scaled", scaled_ns, spec),
        )

        def waiting() -> dict[str, Any] | None:
            body = control_plane.get("durablejob", "-n", scaled_ns, "scaled")
            decided = (body.get("status") or {}).get("autoscaling") or {}
            return (
                body
                if decided.get("measured") is False and "desiredReplicas" in body["status"]
                else None
            )

        job = eventually_blocking(waiting, what="the autoscaler's first round")
        decided = job["status"]["autoscaling"]
        assert decided["replicas"] == 1
        assert decided["message"].startswith(
            "holding 1 replicas: the queue's backlog is not measured"
        )
        worker = control_plane.get("deployment", "-n", scaled_ns, "scaled-worker")
        assert worker["spec"]["replicas"] == 1, "minReplicas, not spec.replicas"
        scheduler = control_plane.get("deployment", "-n", scaled_ns, "ferry-scheduler")
        owners = [(o["kind"], o["name"]) for o in scheduler["metadata"]["ownerReferences"]]
        assert owners == [("DurableJob", "scaled")]
        tasks = control_plane.get("configmap", "-n", scaled_ns, "ferry-scheduler-tasks")
        assert json.loads(tasks["data"]["tasks.json"]) == {"tasks": []}
        eventually_blocking(
            lambda: (
                control_plane.get("durablejob", "-n", scaled_ns, "scaled")["status"].get(
                    "desiredReplicas"
                )
                == 1
            ),
            what="desiredReplicas 1",
        )
        header, row = control_plane.kubectl("get", "dj", "scaled", "-n", scaled_ns).splitlines()
        assert row[header.index("DESIRED") :].split()[0] == "1", (header, row)
    finally:
        control_plane.kubectl("delete", "namespace", scaled_ns, "--wait=false", check=False)
