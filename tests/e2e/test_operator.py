"""The operator against a real API server: resources → Deployments, drift, GC, refusals.

Every wait is a bounded poll for a condition the user could observe with kubectl.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from control_plane import ControlPlane
from e2e_helpers import (
    condition,
    durable_job,
    env_of,
    example,
    kubelet_reports,
    ready_pod_status,
    with_reason,
)
from operator_process import Fleet
from support.waiting import eventually, eventually_blocking

NAMESPACE = "ferry-demo"


@pytest.fixture(scope="module")
def demo(control_plane: ControlPlane, operator: Fleet) -> Iterator[str]:
    """The examples applied: restricted namespace, database Secret, DurableJobs, task."""
    for name in (
        "namespace.yaml",
        "database-secret.yaml",
        "durablejobs.yaml",
        "scheduledtask.yaml",
    ):
        control_plane.kubectl("apply", "-f", str(example(name)))
    yield NAMESPACE
    control_plane.kubectl("delete", "namespace", NAMESPACE, "--wait=false", check=False)


def _deployment(plane: ControlPlane, name: str) -> Any:
    return plane.get("deployment", "-n", NAMESPACE, name)


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    return deployment["spec"]["template"]["spec"]["containers"][0]


def _ready(plane: ControlPlane, kind: str, name: str) -> dict[str, Any] | None:
    return condition(plane.get(kind, "-n", NAMESPACE, name), "Ready")


def test_a_durable_job_becomes_a_worker_deployment_carrying_the_runtime_contract(
    control_plane: ControlPlane, demo: str
) -> None:
    deployment = eventually_blocking(
        lambda: _deployment(control_plane, "onboard-org-worker"), what="onboard-org-worker"
    )
    job = control_plane.get("durablejob", "-n", NAMESPACE, "onboard-org")
    assert deployment["spec"]["replicas"] == 2
    assert deployment["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "ferry.dev/v1alpha1",
            "kind": "DurableJob",
            "name": "onboard-org",
            "uid": job["metadata"]["uid"],
            "controller": True,
        }
    ]
    pod = deployment["spec"]["template"]["spec"]
    container = _container(deployment)
    assert env_of(container) == {
        "ROLE": "worker",
        "FERRY_APP": "examples.demo.app:api",
        "DATABASE_URL": {"secretKeyRef": {"name": "demo-db", "key": "url"}},
        "QUEUES": "default",
        "CONCURRENCY": "10",
        "DRAIN_SECONDS": "30",
        "METRICS_PORT": "9090",
    }
    assert container["livenessProbe"]["httpGet"] == {
        "path": "/livez",
        "port": "metrics",
        "scheme": "HTTP",
    }
    assert container["startupProbe"]["httpGet"]["path"] == "/livez"
    assert pod["terminationGracePeriodSeconds"] == 45
    # The namespace enforces Pod Security `restricted`: the ReplicaSet's pods are admitted.
    eventually_blocking(
        lambda: (
            len(
                control_plane.get(
                    "pods", "-n", NAMESPACE, "-l", "ferry.dev/durablejob=onboard-org"
                )["items"]
            )
            == 2
        ),
        what="worker pods admitted under restricted",
    )


def test_each_worker_and_scheduler_deployment_gets_a_headless_metrics_service(
    control_plane: ControlPlane, demo: str
) -> None:
    """The Services the chart's ServiceMonitor scrapes: owned like their Deployment (so GC
    takes them too), selecting its pods, exposing the metrics port by name."""
    for name, component in (("onboard-org-worker", "worker"), ("ferry-scheduler", "scheduler")):
        deployment = eventually_blocking(lambda n=name: _deployment(control_plane, n), what=name)
        service = eventually_blocking(
            lambda n=name: control_plane.get("service", "-n", NAMESPACE, n), what=f"Service {name}"
        )
        assert service["metadata"]["ownerReferences"] == deployment["metadata"]["ownerReferences"]
        assert service["metadata"]["labels"]["app.kubernetes.io/part-of"] == "ferry"
        assert service["metadata"]["labels"]["app.kubernetes.io/component"] == component
        assert service["spec"]["clusterIP"] == "None"
        assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
        assert service["spec"]["ports"] == [
            {"name": "metrics", "port": 9090, "targetPort": "metrics", "protocol": "TCP"}
        ]
    selected = control_plane.get(
        "services",
        "-n",
        NAMESPACE,
        "-l",
        "app.kubernetes.io/part-of=ferry,app.kubernetes.io/managed-by=ferry-operator",
    )
    assert {"onboard-org-worker", "ferry-scheduler"} <= {
        s["metadata"]["name"] for s in selected["items"]
    }


def test_durable_job_status_reports_the_generation_it_acted_on(
    control_plane: ControlPlane, demo: str
) -> None:
    def starting() -> dict[str, Any] | None:
        found = _ready(control_plane, "durablejob", "onboard-org")
        return found if found and found["reason"] == "WorkersStarting" else None

    ready = eventually_blocking(starting, what="Ready=False WorkersStarting")
    job = control_plane.get("durablejob", "-n", NAMESPACE, "onboard-org")
    assert job["status"]["observedGeneration"] == job["metadata"]["generation"]
    # No kubelet runs here, so the workers never become ready: the status says so, in kstatus
    # terms — not Ready, still Reconciling, not Stalled.
    assert (ready["status"], ready["message"]) == ("False", "0/2 workers ready")
    reconciling = condition(job, "Reconciling")
    stalled = condition(job, "Stalled")
    assert reconciling and reconciling["status"] == "True"
    assert stalled and stalled["status"] == "False"
    assert job["status"]["readyReplicas"] == 0
    assert job["status"]["replicas"] == 2  # the ReplicaSet created both pods


def test_scheduled_tasks_become_the_namespaces_scheduler_leader_and_standby(
    control_plane: ControlPlane, demo: str
) -> None:
    deployment = eventually_blocking(
        lambda: _deployment(control_plane, "ferry-scheduler"), what="ferry-scheduler"
    )
    task = control_plane.get("scheduledtask", "-n", NAMESPACE, "nightly-digest")
    assert deployment["spec"]["replicas"] == 2
    assert [(o["kind"], o["uid"]) for o in deployment["metadata"]["ownerReferences"]] == [
        ("ScheduledTask", task["metadata"]["uid"])
    ]
    env = env_of(_container(deployment))
    assert env["ROLE"] == "scheduler"
    assert env["FERRY_TASKS_APP"] == "examples.demo.app:api"
    configmap = control_plane.get("configmap", "-n", NAMESPACE, "ferry-scheduler-tasks")
    [fired] = json.loads(configmap["data"]["tasks.json"])["tasks"]
    assert fired["entries"] == [
        {"job": "send_digest", "queue": "default", "input": {"occurrence_ms": 0}}
    ]
    assert (
        control_plane.get("pdb", "-n", NAMESPACE, "ferry-scheduler")["spec"]["maxUnavailable"] == 1
    )
    # No scheduler pod runs yet: the task is not Ready, it waits for one.
    waiting = with_reason(
        control_plane, "scheduledtask", NAMESPACE, "nightly-digest", "SchedulerStarting"
    )
    starting = condition(waiting, "Ready")
    assert starting and starting["status"] == "False" and "0/2" in starting["message"]
    kubelet_reports(
        control_plane, NAMESPACE, "app.kubernetes.io/component=scheduler", ready_pod_status()
    )
    eventually_blocking(
        lambda: (
            (c := _ready(control_plane, "scheduledtask", "nightly-digest"))
            and c["status"] == "True"
        ),
        what="task Ready once a scheduler pod is",
    )
    table = control_plane.kubectl("get", "st", "-n", NAMESPACE)
    header = table.splitlines()[0].split()
    assert header[:5] == ["NAME", "SCHEDULE", "ZONE", "SUSPEND", "LAST"]
    row = table.splitlines()[1]
    assert "0 3 * * *" in row and "Europe/Berlin" in row and "+0" in row and "True" in row
    assert "Scheduled" in row


def test_editing_a_task_rolls_the_scheduler_onto_the_new_task_file(
    control_plane: ControlPlane, demo: str
) -> None:
    def digest() -> str | None:
        deployment = _deployment(control_plane, "ferry-scheduler")
        annotations = (deployment or {}).get("spec", {}).get("template", {}).get("metadata", {})
        return (annotations.get("annotations") or {}).get("ferry.dev/tasks-sha256")

    before = eventually_blocking(digest, what="scheduler with a task digest")
    control_plane.kubectl(
        "patch",
        "scheduledtask",
        "-n",
        NAMESPACE,
        "nightly-digest",
        "--type=merge",
        "-p",
        '{"spec": {"cron": "30 3 * * *"}}',
    )

    def rolled() -> bool:
        configmap = control_plane.get("configmap", "-n", NAMESPACE, "ferry-scheduler-tasks")
        [task] = json.loads(configmap["data"]["tasks.json"])["tasks"]
        return task["cron"] == "30 3 * * *" and digest() not in (None, before)

    eventually_blocking(rolled, what="new task file and a rolled scheduler")


def test_editing_the_resource_changes_the_deployment(
    control_plane: ControlPlane, demo: str
) -> None:
    eventually_blocking(
        lambda: _deployment(control_plane, "send-digest-worker"), what="send-digest-worker"
    )
    control_plane.kubectl(
        "patch",
        "durablejob",
        "-n",
        NAMESPACE,
        "send-digest",
        "--type=merge",
        "-p",
        '{"spec": {"concurrency": 7, "drainSeconds": 50}}',
    )

    def followed() -> bool:
        deployment = _deployment(control_plane, "send-digest-worker")
        env = env_of(_container(deployment))
        grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        return env["CONCURRENCY"] == "7" and env["DRAIN_SECONDS"] == "50" and grace == 65

    eventually_blocking(followed, what="Deployment follows the DurableJob")


def test_a_hand_edited_deployment_is_repaired(control_plane: ControlPlane, demo: str) -> None:
    eventually_blocking(
        lambda: _deployment(control_plane, "onboard-org-worker"), what="onboard-org-worker"
    )
    drift = [
        {"op": "replace", "path": "/spec/replicas", "value": 5},
        {"op": "replace", "path": "/spec/template/spec/terminationGracePeriodSeconds", "value": 1},
    ]
    control_plane.kubectl(
        "patch",
        "deployment",
        "-n",
        NAMESPACE,
        "onboard-org-worker",
        "--type=json",
        "-p",
        json.dumps(drift),
    )

    def repaired() -> bool:
        deployment = _deployment(control_plane, "onboard-org-worker")
        grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        return deployment["spec"]["replicas"] == 2 and grace == 45

    eventually_blocking(repaired, what="Deployment repaired")


async def test_an_operator_restart_changes_nothing(control_plane: ControlPlane, demo: str) -> None:
    """A restarted operator first reconciles everything it lists; that pass must write
    nothing: no new Deployment generation, no ConfigMap or status write."""
    from kubernetes_asyncio import config

    from ferry._clock import SystemClock
    from ferry_operator.config import DatabaseRef
    from ferry_operator.kube import Kube
    from ferry_operator.reconcile import reconcile_namespace

    def snapshot() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for kind in ("deployment", "service", "configmap", "durablejob", "scheduledtask"):
            for item in control_plane.get(kind, "-n", NAMESPACE)["items"]:
                meta = item["metadata"]
                version = meta["generation"] if kind == "deployment" else meta["resourceVersion"]
                seen[f"{kind}/{meta['name']}"] = version
        return seen

    await eventually(
        lambda: _deployment(control_plane, "ferry-scheduler"),
        what="the scheduler",
        within_s=60,
        every_s=0.5,
        first_s=0.5,
    )
    before = snapshot()

    quiet_since = time.monotonic()

    def settled() -> bool:
        """No snapshot changed for half a second: no reconcile is still writing (the
        running operator's own writes must not land in the comparison below)."""
        nonlocal before, quiet_since
        now = snapshot()
        if now != before:
            before, quiet_since = now, time.monotonic()
        return time.monotonic() - quiet_since >= 0.5

    await eventually(settled, what="the namespace settled", within_s=60, every_s=0.5, first_s=0.5)
    api = await config.new_client_from_config(config_file=str(control_plane.kubeconfig))
    posted: list[tuple[Any, ...]] = []

    async def post(*event: Any) -> None:
        posted.append(event)

    try:
        default = DatabaseRef("ferry-database")
        await reconcile_namespace(Kube(api), NAMESPACE, post, default, SystemClock())
    finally:
        await api.close()
    assert snapshot() == before
    assert posted == []


def test_invalid_resources_are_refused_at_apply(control_plane: ControlPlane, demo: str) -> None:
    def refused(kind: str, spec: dict[str, Any]) -> str:
        body = {
            "apiVersion": "ferry.dev/v1alpha1",
            "kind": kind,
            "metadata": {"name": "bad", "namespace": NAMESPACE},
            "spec": spec,
        }
        answer = control_plane.kubectl("apply", "-f", "-", stdin=json.dumps(body), check=False)
        assert "created" not in answer and "configured" not in answer, answer
        return answer

    task = {"cron": "0 3 * * *", "timeZone": "UTC", "entries": [{"job": "send-digest"}]}
    assert "fixed offset" in refused("ScheduledTask", {**task, "timeZone": "UTC+2"})
    assert "@ aliases" in refused("ScheduledTask", {**task, "cron": "@daily"})
    assert "Unsupported value" in refused("ScheduledTask", {**task, "catchUp": "sometimes"})
    assert "entries" in refused("ScheduledTask", {**task, "entries": []})
    job = {"image": "app:1", "handler": "app.jobs:api", "databaseSecretRef": {"name": "db"}}
    assert "env may not set" in refused(
        "DurableJob", {**job, "env": [{"name": "ROLE", "value": "x"}]}
    )
    assert "handler" in refused("DurableJob", {**job, "handler": "not a module"})
    assert "image" in refused("DurableJob", {"handler": "a:b"})
    assert "maxUnavailable" in refused(
        "DurableJob", {**job, "disruptionBudget": {"maxUnavailable": 0}}
    )


def test_autoscaling_values_that_cannot_mean_anything_are_refused_at_apply(
    control_plane: ControlPlane, demo: str
) -> None:
    """The CRD's bounds and its CEL rule, enforced by the API server: max below min, a
    negative count, a target of 0, no max, a cooldown that is not a duration."""

    def answer(autoscaling: dict[str, Any]) -> str:
        body = durable_job("scaled", NAMESPACE, autoscaling=autoscaling)
        return control_plane.kubectl(
            "apply", "--dry-run=server", "-f", "-", stdin=json.dumps(body), check=False
        )

    def refused(autoscaling: dict[str, Any], says: str) -> None:
        said = answer(autoscaling)
        assert "created" not in said and says in said, said

    refused(
        {"minReplicas": 3, "maxReplicas": 2},
        "autoscaling.maxReplicas must be at least autoscaling.minReplicas",
    )
    refused({"minReplicas": -1, "maxReplicas": 2}, "spec.autoscaling.minReplicas")
    refused({"maxReplicas": 0}, "spec.autoscaling.maxReplicas")
    refused({"maxReplicas": 2, "targetBacklogPerReplica": 0}, "targetBacklogPerReplica")
    refused({"minReplicas": 1}, "spec.autoscaling.maxReplicas: Required value")
    refused({"maxReplicas": 2, "cooldown": "-5m"}, "spec.autoscaling.cooldown")
    accepted = answer({"maxReplicas": 4})
    assert "created (server dry run)" in accepted, accepted


def test_a_task_the_runtime_refuses_is_flagged_and_never_scheduled(
    control_plane: ControlPlane, demo: str
) -> None:
    body = {
        "apiVersion": "ferry.dev/v1alpha1",
        "kind": "ScheduledTask",
        "metadata": {"name": "on-mars", "namespace": NAMESPACE},
        "spec": {
            "cron": "0 3 * * *",
            "timeZone": "Mars/Olympus",
            "entries": [{"job": "send-digest"}],
        },
    }
    control_plane.kubectl("apply", "-f", "-", stdin=json.dumps(body))
    ready = eventually_blocking(
        lambda: (
            (c := _ready(control_plane, "scheduledtask", "on-mars"))
            and c["status"] == "False"
            and c
        ),
        what="Ready=False on on-mars",
    )
    assert ready["reason"] == "InvalidTimeZone"
    assert ready["message"].startswith('X_INVARIANT: ScheduledTask "on-mars" has tz "Mars/Olympus"')
    assert ready["message"].endswith("e.g. spec.timeZone: Europe/Berlin")
    stalled = condition(control_plane.get("st", "-n", NAMESPACE, "on-mars"), "Stalled")
    assert stalled and (stalled["status"], stalled["reason"]) == ("True", "InvalidTimeZone")
    events = eventually_blocking(
        lambda: control_plane.get(
            "events",
            "-n",
            NAMESPACE,
            "--field-selector",
            "involvedObject.name=on-mars,type=Warning",
        )["items"],
        what="Warning event",
    )
    assert [e["reason"] for e in events] == ["InvalidTimeZone"]
    configmap = control_plane.get("configmap", "-n", NAMESPACE, "ferry-scheduler-tasks")
    names = [t["name"] for t in json.loads(configmap["data"]["tasks.json"])["tasks"]]
    assert names == ["nightly-digest"]
    owners = _deployment(control_plane, "ferry-scheduler")["metadata"]["ownerReferences"]
    assert [o["name"] for o in owners] == ["nightly-digest"]
    control_plane.kubectl("delete", "scheduledtask", "-n", NAMESPACE, "on-mars")


def test_deleting_the_resources_garbage_collects_what_they_owned(
    control_plane: ControlPlane, demo: str
) -> None:
    eventually_blocking(
        lambda: _deployment(control_plane, "send-digest-worker"), what="send-digest-worker"
    )
    eventually_blocking(
        lambda: _deployment(control_plane, "ferry-scheduler"), what="ferry-scheduler"
    )
    control_plane.kubectl("delete", "durablejob", "-n", NAMESPACE, "send-digest")
    eventually_blocking(
        lambda: _deployment(control_plane, "send-digest-worker") is None, what="worker collected"
    )
    eventually_blocking(
        lambda: control_plane.get("service", "-n", NAMESPACE, "send-digest-worker") is None,
        what="worker Service collected",
    )
    # The task's entry now names a missing DurableJob: flagged, and no scheduler runs it.
    flagged = eventually_blocking(
        lambda: (
            (c := _ready(control_plane, "scheduledtask", "nightly-digest"))
            and c["status"] == "False"
            and c
        ),
        what="task flagged",
    )
    assert flagged["reason"] == "JobNotFound"
    assert 'DurableJob "send-digest"' in flagged["message"]
    control_plane.kubectl("delete", "scheduledtask", "-n", NAMESPACE, "nightly-digest")
    for kind in ("deployment", "service", "configmap", "pdb"):
        name = "ferry-scheduler-tasks" if kind == "configmap" else "ferry-scheduler"
        eventually_blocking(
            lambda k=kind, n=name: control_plane.get(k, "-n", NAMESPACE, n) is None,
            what=f"{kind} collected",
        )
    control_plane.kubectl("delete", "durablejob", "-n", NAMESPACE, "onboard-org")
    eventually_blocking(
        lambda: _deployment(control_plane, "onboard-org-worker") is None, what="worker collected"
    )
