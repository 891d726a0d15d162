"""A DurableJob autoscaled on its queue's backlog, on real pods: from zero to max and back.

Budget: 2,000 slow runs (one durable 1 s batch each) enqueued at once onto the queue
``bulk`` of a DurableJob with ``minReplicas: 0, maxReplicas: 3, targetBacklogPerReplica: 10,
cooldown: 30s``. Invariants: the workers go from none to three while the backlog lasts and
back to none after the cooldown; every run completes exactly once (one attempt, its one
batch recorded once) — scaling down drains, it never loses or repeats work. The times to
the first worker, to all three, to the last run and back to zero are printed, not asserted.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest
from e2e_helpers import HANDLER, resource, restricted_namespace, secret
from node import Cluster, NodeAssets
from pg_relay import PodDatabase
from support.waiting import eventually, eventually_blocking

from examples.demo.jobs import reindex_catalog
from ferry._jobs.facade import set_job_driver
from ferry.drivers import postgres_job_driver

NAMESPACE = "ferry-node-scale"
QUEUE = "bulk"
RUNS = 2_000
MAX = 3
COOLDOWN_S = 30
PODS_BUDGET_S = 300.0
WORK_BUDGET_S = 600.0


@dataclass
class Scaled:
    cluster: Cluster
    database: PodDatabase

    def workers(self) -> list[dict[str, Any]]:
        """The worker pods that exist and are not going (any phase)."""
        found = self.cluster.plane.get(
            "pods", "-n", NAMESPACE, "-l", "ferry.dev/durablejob=bulk-reindex"
        )
        return [
            p
            for p in (found or {"items": []})["items"]
            if not p["metadata"].get("deletionTimestamp")
        ]

    def ready_workers(self) -> int:
        return sum(1 for pod in self.workers() if _ready(pod))

    def job(self) -> dict[str, Any]:
        found: dict[str, Any] = self.cluster.plane.get("dj", "bulk-reindex", "-n", NAMESPACE)
        return found

    def logs(self) -> str:
        kubectl = self.cluster.plane.kubectl
        return "\n".join(
            (
                kubectl("get", "pods,dj", "-n", NAMESPACE, "-o", "wide", check=False),
                kubectl("get", "events", "-n", NAMESPACE, check=False)[-4000:],
                kubectl(
                    "logs", "-n", "ferry-system", "-l", "app.kubernetes.io/component=operator",
                    "--tail=30", check=False,
                ),
            )
        )  # fmt: skip


def _ready(pod: dict[str, Any]) -> bool:
    statuses = pod["status"].get("containerStatuses") or []
    return (
        pod["status"].get("phase") == "Running"
        and bool(statuses)
        and all(s.get("ready") for s in statuses)
    )


@pytest.fixture(scope="module")
def scaled(
    cluster: Cluster, ferry_release: str, pod_database: PodDatabase, node_assets: NodeAssets
) -> Iterator[Scaled]:
    """The autoscaled DurableJob at rest: its namespace's scheduler measuring, no worker."""
    plane = cluster.plane
    spec = {
        "image": node_assets.runtime_image,
        "handler": HANDLER,
        "job": "reindex_catalog",
        "queue": QUEUE,
        "concurrency": 10,
        "drainSeconds": 10,
        "databaseSecretRef": {"name": "db"},
        "autoscaling": {
            "minReplicas": 0,
            "maxReplicas": MAX,
            "targetBacklogPerReplica": 10,
            "cooldown": f"{COOLDOWN_S}s",
        },
    }
    bodies = [
        restricted_namespace(NAMESPACE),
        secret("db", NAMESPACE, pod_database.pod_dsn),
        resource("DurableJob", "bulk-reindex", NAMESPACE, spec),
    ]
    for body in bodies:
        plane.kubectl("apply", "-f", "-", stdin=json.dumps(body))
    state = Scaled(cluster, pod_database)
    try:
        eventually_blocking(
            lambda: (
                ((state.job().get("status") or {}).get("autoscaling") or {}).get("measured")
                and not state.workers()
            ),
            what="the DurableJob measured at rest with no worker",
            within_s=PODS_BUDGET_S,
            context=state.logs,
        )
        yield state
    except BaseException:
        print(state.logs())
        raise
    finally:
        plane.kubectl("delete", "namespace", NAMESPACE, "--timeout=90s", check=False)


async def test_a_burst_scales_from_zero_to_max_and_back_and_every_run_completes_once(
    scaled: Scaled,
) -> None:
    driver = postgres_job_driver(scaled.database.host_dsn, pool_max_size=2)
    await driver.open()
    set_job_driver(driver)
    try:
        inputs = [
            {"catalog": f"burst-{n}", "batches": 1, "batch_seconds": 1.0} for n in range(RUNS)
        ]
        started = time.monotonic()
        for chunk in range(0, RUNS, 500):
            await reindex_catalog.enqueue_many(inputs[chunk : chunk + 500], queue=QUEUE)
        enqueued = time.monotonic()
    finally:
        set_job_driver(None)
        await driver.close()
    db = await asyncpg.connect(scaled.database.host_dsn)
    try:
        first = await eventually(
            lambda: scaled.ready_workers() >= 1 and time.monotonic(),
            what="a first worker pod ready",
            within_s=PODS_BUDGET_S,
            every_s=0.5,
            context=scaled.logs,
        )
        at_max = await eventually(
            lambda: scaled.ready_workers() == MAX and time.monotonic(),
            what=f"{MAX} worker pods ready",
            within_s=PODS_BUDGET_S,
            every_s=0.5,
            context=scaled.logs,
        )
        done_sql = (
            "SELECT count(*) FROM ferry.jobs WHERE name = 'reindex_catalog' AND queue = $1"
            " AND state = 'completed'"
        )
        drained = await eventually(
            lambda: _all_done(db, done_sql),
            what=f"all {RUNS} runs completed",
            within_s=WORK_BUDGET_S,
            every_s=1,
            context=scaled.logs,
        )
        zero = await eventually(
            lambda: not scaled.workers() and scaled.job()["status"].get("desiredReplicas") == 0
            and time.monotonic(),
            what="the workers scaled back to zero after the cooldown",
            within_s=COOLDOWN_S + WORK_BUDGET_S,
            every_s=1,
            context=scaled.logs,
        )  # fmt: skip
        runs = await db.fetch(
            "SELECT id, attempts FROM ferry.jobs WHERE name = 'reindex_catalog' AND queue = $1",
            QUEUE,
        )
        steps = await db.fetchval(
            "SELECT count(*) FROM ferry.steps s JOIN ferry.jobs j ON j.id = s.job_id"
            " WHERE j.queue = $1",
            QUEUE,
        )
    finally:
        await db.close()
    assert len(runs) == RUNS
    assert {run["attempts"] for run in runs} == {1}, "every run completed on its first attempt"
    assert steps == RUNS, "each run's one batch recorded once"
    status = scaled.job()["status"]
    assert status["autoscaling"]["replicas"] == 0
    assert status["autoscaling"]["message"].startswith("scaled down from ")
    scaled_events = [
        e["message"]
        for e in scaled.cluster.plane.get(
            "events", "-n", NAMESPACE, "--field-selector", "involvedObject.name=bulk-reindex"
        )["items"]
        if e["reason"] == "Scaled"
    ]
    assert any(f"to {MAX}; autoscaler: scaled up from" in m for m in scaled_events), scaled_events
    assert any("to 0; autoscaler: scaled down from" in m for m in scaled_events), scaled_events
    print(
        f"measured: {RUNS} runs enqueued in {enqueued - started:.1f} s; after the enqueue: "
        f"first worker ready {first - enqueued:.1f} s, {MAX} ready {at_max - enqueued:.1f} s, "
        f"all completed {drained - enqueued:.1f} s, back to 0 {zero - enqueued:.1f} s "
        f"(cooldown {COOLDOWN_S} s)"
    )
    for message in scaled_events:
        print(f"  Scaled: {message}")


async def _all_done(db: asyncpg.Connection, sql: str) -> float | None:
    done = await db.fetchval(sql, QUEUE)
    return time.monotonic() if done == RUNS else None
