"""The headless metrics Service in front of each worker and scheduler Deployment."""

from __future__ import annotations

from operator_bodies import durable_job, scheduled_task

from ferry_operator.schedule import plan_scheduler
from ferry_operator.scheduler import scheduler_deployment
from ferry_operator.service import metrics_service
from ferry_operator.worker import worker_deployment

NOW_MS = 1_780_315_200_000  # 2026-06-01T12:00:00Z


def test_a_worker_service_is_headless_and_exposes_the_metrics_port_by_name() -> None:
    service = metrics_service(worker_deployment(durable_job(metricsPort=9100)))
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["ports"] == [
        {"name": "metrics", "port": 9100, "targetPort": "metrics", "protocol": "TCP"}
    ]


def test_a_worker_service_is_named_owned_and_selecting_like_its_deployment() -> None:
    deployment = worker_deployment(durable_job("digest"))
    service = metrics_service(deployment)
    assert service["metadata"]["name"] == "digest-worker"
    assert service["metadata"]["namespace"] == "shop"
    assert service["metadata"]["ownerReferences"] == deployment["metadata"]["ownerReferences"]
    assert service["metadata"]["ownerReferences"][0]["uid"] == "uid-digest"
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert service["spec"]["selector"].items() <= (
        deployment["spec"]["template"]["metadata"]["labels"].items()
    )


def test_services_carry_the_labels_the_chart_servicemonitor_selects() -> None:
    plan = plan_scheduler(
        [scheduled_task()], {"digest": durable_job("digest", job="send_digest")}, NOW_MS
    )
    worker = metrics_service(worker_deployment(durable_job()))
    scheduler = metrics_service(scheduler_deployment("shop", plan))
    for service, component in ((worker, "worker"), (scheduler, "scheduler")):
        labels = service["metadata"]["labels"]
        assert labels["app.kubernetes.io/part-of"] == "ferry"
        assert labels["app.kubernetes.io/managed-by"] == "ferry-operator"
        assert labels["app.kubernetes.io/component"] == component


def test_the_scheduler_service_selects_leader_and_standby_and_is_owned_by_the_tasks() -> None:
    plan = plan_scheduler(
        [scheduled_task("a"), scheduled_task("b")],
        {"digest": durable_job("digest", job="send_digest")},
        NOW_MS,
    )
    deployment = scheduler_deployment("shop", plan)
    service = metrics_service(deployment)
    assert service["metadata"]["name"] == "ferry-scheduler"
    assert [o["uid"] for o in service["metadata"]["ownerReferences"]] == ["uid-a", "uid-b"]
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["port"] == 9090


def test_the_same_deployment_always_builds_the_same_service() -> None:
    deployment = worker_deployment(durable_job())
    assert metrics_service(deployment) == metrics_service(deployment)
