"""The operator touches only what is its own: it streams only its own Deployments (the server
filters them), never deletes or overwrites an object it did not write (kube-system included),
and a namespace being deleted costs at most one quiet log line, never a traceback."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from control_plane import ControlPlane
from e2e_helpers import (
    apply,
    condition,
    durable_job,
    events_of,
    resource,
    secret,
    with_reason,
)
from operator_process import RELEASE, Fleet
from support.waiting import eventually, eventually_blocking

NAMESPACE = "ferry-bystander"
OWNED = "app.kubernetes.io/managed-by=ferry-operator"


def _foreign_deployment(name: str, namespace: str, **labels: str) -> dict[str, Any]:
    """A Deployment someone else runs (no ferry owner)."""
    selector = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {**selector, **labels}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": selector},
                "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
            },
        },
    }


@pytest.fixture(scope="module")
def bystander(control_plane: ControlPlane, operator: Fleet) -> Iterator[str]:
    control_plane.kubectl("create", "namespace", NAMESPACE)
    yield NAMESPACE
    control_plane.kubectl("delete", "namespace", NAMESPACE, "--wait=false", check=False)


def _operator_requests(plane: ControlPlane) -> list[dict[str, Any]]:
    """The operator's resource requests (every audited one but discovery's)."""
    return [e for e in plane.audit(RELEASE.username) if "objectRef" in e]


def test_only_the_operators_own_deployments_are_listed_and_watched(
    control_plane: ControlPlane, operator: Fleet, bystander: str
) -> None:
    def streams() -> list[dict[str, Any]]:
        return [
            e
            for e in _operator_requests(control_plane)
            if e["objectRef"].get("resource") == "deployments" and e["verb"] in ("list", "watch")
        ]

    found = eventually_blocking(streams, what="the operator's Deployment list and watch")
    assert {e["verb"] for e in found} == {"list", "watch"}
    for request in found:
        query = parse_qs(urlsplit(request["requestURI"]).query)
        assert query["labelSelector"] == [OWNED], request["requestURI"]


def test_objects_named_like_the_operators_but_not_its_own_are_never_deleted(
    control_plane: ControlPlane, bystander: str
) -> None:
    """A namespace with no runnable task has no scheduler, so the operator removes one it
    owns; someone else's `ferry-scheduler` Deployment and ConfigMap stay."""
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "ferry-scheduler-tasks", "namespace": bystander},
        "data": {"mine": "yes"},
    }
    apply(
        control_plane,
        _foreign_deployment("ferry-scheduler", bystander),
        configmap,
        secret("ferry-database", bystander),
        durable_job("lonely", bystander),
        # Refused, so no scheduler runs: the reconcile removes the scheduler objects, and
        # writes this task's status only after that step.
        resource(
            "ScheduledTask",
            "refused",
            bystander,
            {"cron": "0 3 * * *", "timeZone": "Mars/Olympus", "entries": [{"job": "lonely"}]},
        ),
    )

    # The task's status is written after the scheduler step.
    with_reason(control_plane, "st", bystander, "refused", "InvalidTimeZone")
    assert control_plane.get("deployment", "-n", bystander, "ferry-scheduler") is not None
    assert control_plane.get("configmap", "-n", bystander, "ferry-scheduler-tasks") is not None
    deletes = [e for e in _operator_requests(control_plane) if e["verb"] == "delete"]
    assert not [e for e in deletes if e["objectRef"].get("namespace") == bystander]


def test_a_foreign_scheduler_deployment_stalls_the_tasks_and_stays_untouched(
    control_plane: ControlPlane, bystander: str
) -> None:
    """The namespace's `ferry-scheduler` is someone else's (the test above left it): a task
    that would run there is Stalled instead of taking that Deployment over."""
    before = control_plane.get("deployment", "-n", bystander, "ferry-scheduler")
    task = {"cron": "0 3 * * *", "timeZone": "UTC", "entries": [{"job": "lonely"}]}
    apply(control_plane, resource("ScheduledTask", "valid", bystander, task))

    task = with_reason(control_plane, "st", bystander, "valid", "DeploymentConflict")
    ready = condition(task, "Ready")
    assert ready and 'Deployment "ferry-scheduler" already exists' in ready["message"]
    after = control_plane.get("deployment", "-n", bystander, "ferry-scheduler")
    assert after["metadata"]["generation"] == before["metadata"]["generation"]
    assert after["metadata"].get("ownerReferences") is None
    assert control_plane.get("configmap", "-n", bystander, "ferry-scheduler-tasks")["data"] == {
        "mine": "yes"
    }


def test_a_copied_label_in_kube_system_does_not_make_an_object_the_operators(
    control_plane: ControlPlane, operator: Fleet
) -> None:
    """A kube-system Deployment carrying the operator's label reaches it (the label is what
    the server filters on) and makes it reconcile kube-system; with no ferry owner it stays."""
    apply(
        control_plane,
        _foreign_deployment(
            "ferry-scheduler", "kube-system", **{"app.kubernetes.io/managed-by": "ferry-operator"}
        ),
    )

    def inspected() -> bool:
        return any(
            e["verb"] == "get"
            and e["objectRef"].get("namespace") == "kube-system"
            and e["objectRef"].get("name") == "ferry-scheduler"
            for e in _operator_requests(control_plane)
        )

    eventually_blocking(inspected, what="the operator reading the kube-system Deployment's owners")
    assert control_plane.get("deployment", "-n", "kube-system", "ferry-scheduler") is not None
    assert not [
        e
        for e in _operator_requests(control_plane)
        if e["verb"] == "delete" and e["objectRef"].get("namespace") == "kube-system"
    ]
    control_plane.kubectl("delete", "deployment", "ferry-scheduler", "-n", "kube-system")


def test_a_foreign_deployment_in_the_way_stalls_the_durable_job_and_stays_untouched(
    control_plane: ControlPlane, bystander: str
) -> None:
    apply(control_plane, _foreign_deployment("clash-worker", bystander))
    before = control_plane.get("deployment", "-n", bystander, "clash-worker")
    apply(control_plane, durable_job("clash", bystander))

    job = with_reason(control_plane, "dj", bystander, "clash", "DeploymentConflict")
    ready = condition(job, "Ready")
    assert ready and 'Deployment "clash-worker" already exists' in ready["message"]
    after = control_plane.get("deployment", "-n", bystander, "clash-worker")
    assert after["metadata"]["generation"] == before["metadata"]["generation"]
    assert "app.kubernetes.io/managed-by" not in after["metadata"]["labels"]
    warnings = [e for e in events_of(control_plane, bystander, "clash") if e["type"] == "Warning"]
    assert [e["reason"] for e in warnings] == ["DeploymentConflict"]


async def test_the_api_servers_refusals_in_a_namespace_going_away_are_recognised(
    control_plane: ControlPlane,
) -> None:
    """What the operator classifies as "namespace being deleted" is what this API server
    answers: a finalizer holds a namespace in Terminating while a create is tried there, and
    once the namespace is gone, another create."""
    from kubernetes_asyncio import client, config
    from kubernetes_asyncio.client.exceptions import ApiException

    from ferry_operator.kube import namespace_going

    namespace = "ferry-limbo"
    control_plane.kubectl("create", "namespace", namespace)
    held = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "held", "namespace": namespace, "finalizers": ["ferry.dev/test-hold"]},
    }
    apply(control_plane, held)
    control_plane.kubectl("delete", "namespace", namespace, "--wait=false")
    await eventually(
        lambda: control_plane.get("namespace", namespace)["status"]["phase"] == "Terminating",
        what="namespace Terminating",
        within_s=60,
        every_s=0.5,
        first_s=0.5,
    )
    api = await config.new_client_from_config(config_file=str(control_plane.kubeconfig))
    core = client.CoreV1Api(api)
    try:
        with pytest.raises(ApiException) as terminating:
            await core.create_namespaced_config_map(namespace, {"metadata": {"name": "late"}})
        control_plane.kubectl(
            "patch",
            "configmap",
            "held",
            "-n",
            namespace,
            "--type=merge",
            "-p",
            '{"metadata": {"finalizers": null}}',
        )
        await eventually(
            lambda: control_plane.get("namespace", namespace) is None,
            what="the namespace gone",
            within_s=60,
            every_s=0.5,
            first_s=0.5,
        )
        with pytest.raises(ApiException) as gone:
            await core.create_namespaced_config_map(namespace, {"metadata": {"name": "later"}})
    finally:
        await api.close()
    assert terminating.value.status == 403 and namespace_going(terminating.value)
    assert gone.value.status == 404 and namespace_going(gone.value)
    assert not namespace_going(ApiException(status=403, reason="Forbidden"))


def test_deleting_a_namespace_costs_at_most_one_log_line_and_no_traceback(
    control_plane: ControlPlane, operator: Fleet
) -> None:
    """Budget: a namespace with a Secret, three DurableJobs and a task, deleted at once.
    Invariant: after the operator's last reconcile there, its leader logged no traceback and
    at most one line about the namespace."""
    namespace = "ferry-doomed"
    control_plane.kubectl("create", "namespace", namespace)
    leader = operator.leader()
    apply(
        control_plane,
        secret("ferry-database", namespace),
        *(durable_job(f"job-{i}", namespace) for i in range(3)),
        resource(
            "ScheduledTask",
            "nightly",
            namespace,
            {"cron": "0 3 * * *", "timeZone": "UTC", "entries": [{"job": "job-0"}]},
        ),
    )
    eventually_blocking(
        lambda: control_plane.get("deployment", "-n", namespace, "ferry-scheduler"),
        what="the scheduler",
    )
    logged = len(leader.output())
    control_plane.kubectl("delete", "namespace", namespace, "--wait=false")
    eventually_blocking(
        lambda: control_plane.get("namespace", namespace) is None,
        what="the namespace gone",
        within_s=120,
    )
    gone = datetime.now(UTC)

    def reconciled_after() -> bool:
        """The last call of a reconcile (the tasks ConfigMap's owner check) came after."""
        return any(
            e["verb"] == "get"
            and e["objectRef"].get("namespace") == namespace
            and e["objectRef"].get("name") == "ferry-scheduler-tasks"
            and datetime.fromisoformat(e["stageTimestamp"].replace("Z", "+00:00")) >= gone
            for e in _operator_requests(control_plane)
        ) or _coalesced(leader.output()[logged:], namespace)

    # The DurableJobs' deletion events make the operator reconcile the emptied namespace once
    # more; a bounded wait for that reconcile, not a sleep.
    started = time.monotonic()
    eventually_blocking(reconciled_after, what="a reconcile of the emptied namespace", within_s=60)
    tail = leader.output()[logged:]
    assert "Traceback" not in tail, tail
    mentions = [line for line in tail.splitlines() if namespace in line]
    assert len(mentions) <= 1, mentions
    print(
        f"\nnamespace deletion: {len(mentions)} log line(s) in {time.monotonic() - started:.1f} s"
    )


def _coalesced(tail: str, namespace: str) -> bool:
    """The reconcile of the emptied namespace may have folded into the one the terminating
    namespace refused (and that one logged): then nothing more is coming."""
    return f"namespace {namespace} is being deleted" in tail
