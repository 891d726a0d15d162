"""Status conditions and per-namespace coalescing of reconcile requests."""

from __future__ import annotations

import asyncio

from ferry_operator.coalesce import Coalescer
from ferry_operator.status import durable_job_readiness, ready_condition


def test_ready_transition_time_moves_only_when_the_status_flips() -> None:
    first = ready_condition(ready=False, reason="A", message="a", now="t1", previous=[])
    same = ready_condition(ready=False, reason="B", message="b", now="t2", previous=[first])
    flipped = ready_condition(ready=True, reason="C", message="c", now="t3", previous=[same])
    assert (first["lastTransitionTime"], same["lastTransitionTime"]) == ("t1", "t1")
    assert flipped["lastTransitionTime"] == "t3" and flipped["status"] == "True"


def test_a_durable_job_is_ready_once_its_workers_are() -> None:
    assert durable_job_readiness(None, 1)[0] is False
    assert durable_job_readiness({"status": {"readyReplicas": 1}}, 2)[:2] == (
        False,
        "WorkersStarting",
    )
    assert durable_job_readiness({"status": {"readyReplicas": 2}}, 2)[0] is True


async def test_requests_during_a_reconcile_fold_into_exactly_one_more_round() -> None:
    started = asyncio.Event()
    release = asyncio.Event()
    rounds: list[str] = []

    async def reconcile(namespace: str) -> None:
        rounds.append(namespace)
        started.set()
        await release.wait()

    coalescer = Coalescer(reconcile)
    running = asyncio.create_task(coalescer.request("shop"))
    await started.wait()
    for _ in range(5):
        await coalescer.request("shop")  # returns at once: marked dirty
    release.set()
    await running
    assert rounds == ["shop", "shop"]
    assert coalescer.known() == ["shop"]


async def test_a_failed_reconcile_does_not_wedge_its_namespace() -> None:
    calls = 0

    async def reconcile(namespace: str) -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError("api server unavailable")

    coalescer = Coalescer(reconcile)
    await coalescer.request("shop")
    await coalescer.request("shop")
    assert calls == 2
