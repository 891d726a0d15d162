"""kstatus conditions from verdicts, DurableJob verdicts, and per-namespace coalescing."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from kubernetes_asyncio.client.exceptions import ApiException

from ferry_operator.coalesce import Coalescer
from ferry_operator.conditions import (
    State,
    Verdict,
    changed,
    conditions,
    durable_job_verdict,
    secret_not_found,
)
from ferry_operator.config import DatabaseRef
from ferry_operator.kube import namespace_going

READY = Verdict(State.READY, "WorkersReady", "2/2 workers ready")
STARTING = Verdict(State.RECONCILING, "WorkersStarting", "0/2 workers ready")
STALLED = Verdict(State.STALLED, "SecretNotFound", 'Secret "db" does not exist')


def _by_type(built: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in built}


def test_each_state_sets_exactly_its_kstatus_condition_true() -> None:
    for verdict in (READY, STARTING, STALLED):
        built = _by_type(conditions(verdict, generation=3, now="t", previous=[]))
        assert set(built) == {"Ready", "Reconciling", "Stalled"}
        trues = [kind for kind, c in built.items() if c["status"] == "True"]
        assert trues == [verdict.state.value]


def test_every_condition_carries_the_generation_reason_and_message_it_describes() -> None:
    for condition in conditions(STALLED, generation=7, now="t", previous=[]):
        assert condition["observedGeneration"] == 7
        assert (condition["reason"], condition["message"]) == (STALLED.reason, STALLED.message)


def test_transition_time_moves_only_when_a_conditions_status_flips() -> None:
    first = conditions(STARTING, generation=1, now="t1", previous=[])
    same = conditions(
        Verdict(State.RECONCILING, "RollingOut", "1/2"), generation=2, now="t2", previous=first
    )
    flipped = _by_type(conditions(READY, generation=2, now="t3", previous=same))
    assert {c["lastTransitionTime"] for c in same} == {"t1"}
    assert flipped["Ready"]["lastTransitionTime"] == "t3"
    assert flipped["Reconciling"]["lastTransitionTime"] == "t3"
    assert flipped["Stalled"]["lastTransitionTime"] == "t1"  # False before and after


def test_a_verdict_is_news_on_a_new_reason_or_a_new_stall_message_only() -> None:
    stored = conditions(STARTING, generation=1, now="t", previous=[])
    assert changed(STARTING, []) is True
    assert changed(Verdict(State.RECONCILING, "WorkersStarting", "1/2 ready"), stored) is False
    assert changed(READY, stored) is True
    stalled = conditions(STALLED, generation=1, now="t", previous=[])
    assert changed(STALLED, stalled) is False
    assert changed(Verdict(State.STALLED, "SecretNotFound", "another"), stalled) is True


def test_only_a_stall_is_announced_as_a_warning() -> None:
    assert (READY.event_type, STARTING.event_type, STALLED.event_type) == (
        "Normal",
        "Normal",
        "Warning",
    )


def _deployment(generation: int = 1, **status: Any) -> dict[str, Any]:
    return {"metadata": {"generation": generation}, "status": status}


def test_a_durable_job_is_ready_once_its_workers_are() -> None:
    ready = _deployment(observedGeneration=1, updatedReplicas=2, readyReplicas=2)
    assert durable_job_verdict(ready, 2, None).reason == "WorkersReady"
    starting = _deployment(observedGeneration=1, updatedReplicas=2, readyReplicas=1)
    verdict = durable_job_verdict(starting, 2, None)
    assert (verdict.state, verdict.reason, verdict.message) == (
        State.RECONCILING,
        "WorkersStarting",
        "1/2 workers ready",
    )


def test_a_rollout_the_deployment_controller_has_not_seen_is_reconciling() -> None:
    stale = _deployment(generation=2, observedGeneration=1, updatedReplicas=2, readyReplicas=2)
    assert durable_job_verdict(stale, 2, None).reason == "RollingOut"
    assert durable_job_verdict(None, 2, None).reason == "DeploymentCreating"


def test_a_deployment_past_its_progress_deadline_is_stalled() -> None:
    stuck = _deployment(
        observedGeneration=1,
        updatedReplicas=1,
        conditions=[
            {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}
        ],
    )
    verdict = durable_job_verdict(stuck, 2, None)
    assert (verdict.state, verdict.reason) == (State.STALLED, "ProgressDeadlineExceeded")


def test_scaled_to_zero_is_ready() -> None:
    verdict = durable_job_verdict(_deployment(observedGeneration=1), 0, None)
    assert (verdict.state, verdict.reason) == (State.READY, "ScaledToZero")


def test_a_missing_secret_stalls_the_durable_job_naming_the_secret_and_the_fix() -> None:
    message = secret_not_found("shop", DatabaseRef("shop-db", "dsn"), defaulted=False)
    ready = _deployment(observedGeneration=1, updatedReplicas=1, readyReplicas=1)
    verdict = durable_job_verdict(ready, 1, message)
    assert (verdict.state, verdict.reason) == (State.STALLED, "SecretNotFound")
    assert 'Secret "shop-db"' in message and 'namespace "shop"' in message
    assert "create secret generic shop-db --from-literal=dsn=" in message
    assert "spec.databaseSecretRef.name" in message
    defaulted = secret_not_found("shop", DatabaseRef("ferry-database"), defaulted=True)
    assert "defaultDatabaseSecret" in defaulted and "spec.databaseSecretRef is unset" in defaulted


async def test_requests_during_a_reconcile_fold_into_exactly_one_more_round() -> None:
    started = asyncio.Event()
    release = asyncio.Event()
    rounds: list[str] = []

    async def reconcile(namespace: str) -> bool:
        rounds.append(namespace)
        started.set()
        await release.wait()
        return True

    coalescer = Coalescer(reconcile)
    running = asyncio.create_task(coalescer.request("shop"))
    await started.wait()
    for _ in range(5):
        await coalescer.request("shop")  # returns at once: marked dirty
    release.set()
    await running
    assert rounds == ["shop", "shop"]
    assert coalescer.known() == ["shop"]


async def test_a_namespace_without_ferry_resources_is_forgotten() -> None:
    holds = {"shop": True}

    async def reconcile(namespace: str) -> bool:
        return holds[namespace]

    coalescer = Coalescer(reconcile)
    await coalescer.request("shop")
    assert coalescer.known() == ["shop"]
    holds["shop"] = False
    await coalescer.request("shop")
    assert coalescer.known() == []


async def test_a_failed_reconcile_does_not_wedge_its_namespace() -> None:
    calls = 0

    async def reconcile(namespace: str) -> bool:
        nonlocal calls
        calls += 1
        raise RuntimeError("api server unavailable")

    coalescer = Coalescer(reconcile)
    await coalescer.request("shop")
    await coalescer.request("shop")
    assert calls == 2
    assert coalescer.known() == ["shop"]  # the refresh retries it


def _terminating() -> ApiException:
    """The refusal the API server answers a create in a namespace being deleted with."""
    failed = ApiException(status=403, reason="Forbidden")
    failed.body = json.dumps(
        {
            "kind": "Status",
            "status": "Failure",
            "message": 'events "x" is forbidden: unable to create new content in namespace '
            "shop because it is being terminated",
            "reason": "Forbidden",
            "details": {
                "name": "x",
                "kind": "events",
                "causes": [{"reason": "NamespaceTerminating", "field": "metadata.namespace"}],
            },
            "code": 403,
        }
    )
    return failed


def test_a_namespace_gone_is_told_from_another_missing_object() -> None:
    gone = ApiException(status=404, reason="Not Found")
    gone.body = json.dumps(
        {"reason": "NotFound", "details": {"name": "shop", "kind": "namespaces"}}
    )
    missing = ApiException(status=404, reason="Not Found")
    missing.body = json.dumps(
        {"reason": "NotFound", "details": {"name": "x", "kind": "deployments"}}
    )
    assert namespace_going(gone) and not namespace_going(missing)


async def test_a_namespace_being_deleted_is_logged_once_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert namespace_going(_terminating())
    emptied = False

    async def reconcile(namespace: str) -> bool:
        if emptied:
            return False
        raise _terminating()

    coalescer = Coalescer(reconcile)
    with caplog.at_level(logging.INFO, logger="ferry_operator"):
        for _ in range(4):
            await coalescer.request("shop")
        emptied = True
        await coalescer.request("shop")
    assert [r.getMessage() for r in caplog.records] == [
        "namespace shop is being deleted: leaving it be"
    ]
    assert not any(r.exc_info for r in caplog.records)
    assert coalescer.known() == []


async def test_a_forbidden_namespace_is_one_warning_line_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def reconcile(namespace: str) -> bool:
        failed = ApiException(status=403, reason="Forbidden")
        failed.body = json.dumps({"message": 'deployments.apps "x" is forbidden: no RBAC'})
        raise failed

    with caplog.at_level(logging.INFO, logger="ferry_operator"):
        await Coalescer(reconcile).request("kube-system")
    [record] = caplog.records
    assert record.levelno == logging.WARNING and not record.exc_info
    assert record.getMessage() == (
        'namespace kube-system refused the reconcile: deployments.apps "x" is forbidden: no RBAC'
    )
