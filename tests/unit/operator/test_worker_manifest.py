"""The worker Deployment a DurableJob becomes: the runtime contract, security, ownership."""

from __future__ import annotations

from typing import Any

from operator_bodies import durable_job

from ferry_operator.config import DatabaseRef
from ferry_operator.names import DRAIN_MARGIN_SECONDS, LIVENESS_PATH
from ferry_operator.pods import with_database_default
from ferry_operator.worker import worker_deployment, worker_disruption_budget, worker_selector

DEFAULT = DatabaseRef("ferry-database", "dsn")


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers: list[dict[str, Any]] = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_worker_pod_carries_the_runtime_contract_env() -> None:
    body = durable_job(queue="mail", concurrency=4, drainSeconds=45, metricsPort=9100)
    container = _container(worker_deployment(body))
    assert container["command"] == ["ferry", "run"]
    assert _env(container) == {
        "ROLE": "worker",
        "FERRY_APP": "examples.demo.app:api",
        "DATABASE_URL": {"secretKeyRef": {"name": "shop-db", "key": "url"}},
        "QUEUES": "mail",
        "CONCURRENCY": "4",
        "DRAIN_SECONDS": "45",
        "METRICS_PORT": "9100",
    }


def test_grace_period_is_the_drain_budget_plus_a_margin() -> None:
    pod = worker_deployment(durable_job(drainSeconds=45))["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 45 + DRAIN_MARGIN_SECONDS


def test_liveness_and_startup_probe_the_loop_aware_path_on_the_metrics_port() -> None:
    container = _container(worker_deployment(durable_job(metricsPort=9100)))
    assert container["ports"] == [{"name": "metrics", "containerPort": 9100, "protocol": "TCP"}]
    for probe in ("livenessProbe", "startupProbe"):
        assert container[probe]["httpGet"] == {"path": LIVENESS_PATH, "port": "metrics"}


def test_pods_meet_the_restricted_pod_security_standard() -> None:
    deployment = worker_deployment(durable_job())
    pod = deployment["spec"]["template"]["spec"]
    container = _container(deployment)
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert "resources" in container and container["resources"]["requests"]


def test_the_durable_job_controls_its_worker_deployment() -> None:
    meta = worker_deployment(durable_job("digest"))["metadata"]
    assert meta["name"] == "digest-worker"
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "ferry.dev/v1alpha1",
            "kind": "DurableJob",
            "name": "digest",
            "uid": "uid-digest",
            "controller": True,
        }
    ]


def test_pod_overrides_are_carried_but_cannot_steal_the_selector_labels() -> None:
    body = durable_job(
        replicas=3,
        env=[{"name": "LOG_FORMAT", "value": "json"}],
        resources={"requests": {"cpu": "1"}},
        pod={
            "labels": {"team": "growth", "ferry.dev/durablejob": "other"},
            "annotations": {"a": "b"},
            "nodeSelector": {"pool": "jobs"},
            "serviceAccountName": "shop",
        },
    )
    deployment = worker_deployment(body)
    template = deployment["spec"]["template"]
    assert deployment["spec"]["replicas"] == 3
    assert template["metadata"]["labels"]["team"] == "growth"
    assert template["metadata"]["labels"]["ferry.dev/durablejob"] == "digest"
    assert (
        deployment["spec"]["selector"]["matchLabels"].items()
        <= template["metadata"]["labels"].items()
    )
    assert template["metadata"]["annotations"] == {"a": "b"}
    assert template["spec"]["nodeSelector"] == {"pool": "jobs"}
    assert template["spec"]["serviceAccountName"] == "shop"
    container = _container(deployment)
    assert _env(container)["LOG_FORMAT"] == "json"
    assert container["resources"] == {"requests": {"cpu": "1"}}


def test_the_same_resource_always_builds_the_same_manifest() -> None:
    assert worker_deployment(durable_job()) == worker_deployment(durable_job())


def test_without_a_secret_ref_the_workers_read_the_charts_default_secret() -> None:
    body = durable_job()
    del body["spec"]["databaseSecretRef"]
    env = _env(_container(worker_deployment(with_database_default(body, DEFAULT))))
    assert env["DATABASE_URL"] == {"secretKeyRef": {"name": "ferry-database", "key": "dsn"}}


def test_a_secret_ref_of_its_own_wins_over_the_default_and_keys_default_to_url() -> None:
    body = durable_job(databaseSecretRef={"name": "own"})
    env = _env(_container(worker_deployment(with_database_default(body, DEFAULT))))
    assert env["DATABASE_URL"] == {"secretKeyRef": {"name": "own", "key": "url"}}


def test_a_drain_evicts_one_worker_at_a_time_unless_the_job_says_otherwise() -> None:
    budget = worker_disruption_budget(durable_job("digest"))
    deployment = worker_deployment(durable_job("digest"))
    assert budget["kind"] == "PodDisruptionBudget"
    assert budget["metadata"]["name"] == "digest-worker"
    assert budget["metadata"]["ownerReferences"] == deployment["metadata"]["ownerReferences"]
    assert budget["spec"]["maxUnavailable"] == 1
    assert budget["spec"]["selector"] == deployment["spec"]["selector"]
    assert budget["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"
    wider = worker_disruption_budget(durable_job(disruptionBudget={"maxUnavailable": "50%"}))
    assert wider["spec"]["maxUnavailable"] == "50%"


def test_the_scale_selector_selects_exactly_the_worker_pods() -> None:
    body = durable_job("digest")
    labels = worker_deployment(body)["spec"]["selector"]["matchLabels"]
    assert worker_selector(body) == ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    assert worker_selector(body) == "app.kubernetes.io/component=worker,ferry.dev/durablejob=digest"


def test_workers_prefer_spreading_over_nodes_and_zones() -> None:
    pod = worker_deployment(durable_job("digest"))["spec"]["template"]["spec"]
    [by_node, by_zone] = pod["topologySpreadConstraints"]
    assert (by_node["topologyKey"], by_zone["topologyKey"]) == (
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
    )
    assert by_node["whenUnsatisfiable"] == "ScheduleAnyway"
    assert by_node["labelSelector"]["matchLabels"]["ferry.dev/durablejob"] == "digest"
