"""What the operator asks of the API server: label-selected streams, events, owned objects."""

from __future__ import annotations

from kopf import Resource
from operator_bodies import durable_job

from ferry_operator.config import config_from_env
from ferry_operator.events import event_manifest
from ferry_operator.handlers import operator_settings
from ferry_operator.kube import operator_owned

DEPLOYMENTS = Resource("apps", "v1", "deployments", namespaced=True)
PODS = Resource("", "v1", "pods", namespaced=True)


def test_deployments_and_their_pods_are_streamed_label_selected_by_the_server() -> None:
    settings = operator_settings(config_from_env({"POD_NAMESPACE": "ops"}))
    for resource in (DEPLOYMENTS, PODS):
        selectors = settings.watching.label_selectors.collect(resource)
        assert list(selectors) == ["app.kubernetes.io/managed-by=ferry-operator"]


def test_a_namespaced_operator_scans_nothing_cluster_wide() -> None:
    clusterwide = operator_settings(config_from_env({"POD_NAMESPACE": "ops"}))
    namespaced = operator_settings(
        config_from_env({"POD_NAMESPACE": "ops", "FERRY_WATCH_NAMESPACES": "shop"})
    )
    assert (clusterwide.scanning.disabled, namespaced.scanning.disabled) == (False, True)


def test_an_event_names_the_resource_and_the_replica_that_posted_it() -> None:
    event = event_manifest(
        durable_job("digest"),
        "Warning",
        "SecretNotFound",
        'Secret "shop-db" does not exist',
        now="2026-06-01T12:00:00Z",
        instance="ferry-operator-abc",
    )
    assert event["involvedObject"]["kind"] == "DurableJob"
    assert event["involvedObject"]["uid"] == "uid-digest"
    assert event["metadata"] == {"generateName": "digest.", "namespace": "shop"}
    assert (event["type"], event["reason"]) == ("Warning", "SecretNotFound")
    assert (event["reportingComponent"], event["reportingInstance"]) == (
        "ferry-operator",
        "ferry-operator-abc",
    )


def test_the_operator_owns_only_what_carries_its_label_and_a_ferry_owner() -> None:
    owner = {"apiVersion": "ferry.dev/v1alpha1", "kind": "ScheduledTask", "name": "t", "uid": "u"}
    label = {"app.kubernetes.io/managed-by": "ferry-operator"}
    assert operator_owned({"labels": label, "ownerReferences": [owner]})
    assert not operator_owned({"labels": label})
    assert not operator_owned({"ownerReferences": [owner]})
    foreign = {**owner, "apiVersion": "apps/v1", "kind": "ReplicaSet"}
    assert not operator_owned({"labels": label, "ownerReferences": [foreign]})
