"""ferry on real pods: the chart's operator, workers and schedulers on a real kubelet.

Everything runs the image built from this checkout's Dockerfile, against the test
PostgreSQL (relayed onto the node's address). Time is real here — a clock cannot be frozen
inside a pod — so each wait polls the database or the API for a condition, bounded by a
budget that is a guard, never a claim; the times observed are printed, not asserted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest
from e2e_helpers import minutely_digest
from node import Cluster, NodeAssets
from pg_relay import PodDatabase
from prometheus_client.parser import text_string_to_metric_families
from support.waiting import eventually, eventually_blocking

# The job alone, not the demo app: importing the app would declare its tasks in this
# process, where later harness tests count the declared tasks.
from examples.demo.jobs import reindex_catalog
from ferry._jobs.facade import set_job_driver
from ferry.drivers import postgres_job_driver

NAMESPACE = "ferry-node-demo"
QUEUE = "digests"
"""The DurableJob's queue. The app declares send_digest on "default": the ScheduledTask's
entries must reach this one, the only queue its workers poll."""
DRAIN_SECONDS = 10
PODS_BUDGET_S = 300.0  # first start: containerd unpacks the image, Python imports, migrations
FIRE_BUDGET_S = 150.0  # a minutely cron fires within 60 s of the leader's first round
RUN_BUDGET_S = 120.0

LEADER = "SELECT holder FROM ferry.leases WHERE name = 'scheduler' AND expires_at_ms > 0"
"""The scheduler lease's holder, while one holds it."""


@dataclass
class Demo:
    """The demo app deployed by the operator: its pods and its database."""

    cluster: Cluster
    database: PodDatabase

    def pods(self, component: str) -> list[dict[str, Any]]:
        """Running, ready, not-terminating pods of a component (worker | scheduler)."""
        found = self.cluster.plane.get(
            "pods", "-n", NAMESPACE, "-l", f"app.kubernetes.io/component={component}"
        )
        return [pod for pod in (found or {"items": []})["items"] if _serving(pod)]

    def logs(self) -> str:
        """What a person would look at first: the pods, their events and their logs."""
        kubectl = self.cluster.plane.kubectl
        return "\n".join(
            (
                kubectl("get", "pods", "-A", "-o", "wide", check=False),
                kubectl("get", "events", "-n", NAMESPACE, check=False)[-4000:],
                kubectl(
                    "logs",
                    "-n",
                    NAMESPACE,
                    "--all-containers",
                    "--prefix",
                    "--tail=40",
                    "-l",
                    "app.kubernetes.io/managed-by=ferry-operator",
                    check=False,
                ),
            )
        )


def _serving(pod: dict[str, Any]) -> bool:
    if pod["metadata"].get("deletionTimestamp") or pod["status"].get("phase") != "Running":
        return False
    statuses = pod["status"].get("containerStatuses", [])
    return bool(statuses) and all(s.get("ready") for s in statuses)


@pytest.fixture(scope="module")
def demo(
    cluster: Cluster, ferry_release: str, pod_database: PodDatabase, node_assets: NodeAssets
) -> Iterator[Demo]:
    """The DurableJob (2 workers, polling the queue "digests") and the minutely ScheduledTask
    (2 schedulers), all Running."""
    plane = cluster.plane
    resources = minutely_digest(
        NAMESPACE,
        image=node_assets.runtime_image,
        dsn=pod_database.pod_dsn,
        replicas=2,
        concurrency=4,
        drainSeconds=DRAIN_SECONDS,
        queue=QUEUE,
    )
    for resource in resources:
        plane.kubectl("apply", "-f", "-", stdin=json.dumps(resource))
    demo = Demo(cluster, pod_database)
    try:
        eventually_blocking(
            lambda: len(demo.pods("worker")) == 2 and len(demo.pods("scheduler")) == 2,
            what="2 worker and 2 scheduler pods Running and ready",
            within_s=PODS_BUDGET_S,
        )
        yield demo
    except BaseException:
        print(demo.logs(), cluster.node.log("kubelet"))
        raise
    finally:
        plane.kubectl("delete", "namespace", NAMESPACE, "--timeout=90s", check=False)


@pytest.fixture
async def db(demo: Demo) -> Any:
    connection = await asyncpg.connect(demo.database.host_dsn)
    yield connection
    await connection.close()


def _host(holder: str) -> str:
    """The pod name in a ``<host>:<pid>:<random>`` worker or scheduler id."""
    return holder.split(":", 1)[0]


async def test_pods_run_the_built_image_and_a_scheduled_occurrence_runs_on_a_worker_pod(
    demo: Demo, db: asyncpg.Connection
) -> None:
    """Budget: one minutely occurrence. Invariant: the scheduler pod holding the leader
    lease enqueues it (occurrence-scoped key), and a worker pod completes it."""
    plane = demo.cluster.plane
    operator = plane.get("pods", "-n", "ferry-system", "-l", "app.kubernetes.io/component=operator")
    assert operator and [p for p in operator["items"] if _serving(p)], "the operator runs as a pod"
    for pod in demo.pods("worker") + demo.pods("scheduler"):
        assert pod["spec"]["containers"][0]["image"] == demo.cluster.node.assets.runtime_image

    row = await eventually(
        lambda: db.fetchrow(
            "SELECT id, idempotency_key, attempts FROM ferry.jobs"
            " WHERE name = 'send_digest' AND state = 'completed' ORDER BY id LIMIT 1"
        ),
        what="a scheduled send_digest run completed",
        within_s=FIRE_BUDGET_S,
        every_s=0.5,
        context=demo.logs,
    )
    assert row["idempotency_key"].startswith("every-minute:"), row["idempotency_key"]
    assert row["attempts"] == 1
    leader = await db.fetchval(LEADER)
    assert _host(leader) in {p["metadata"]["name"] for p in demo.pods("scheduler")}
    # Scraped from the pods' own /metrics, as Prometheus would.
    dispatched = {
        name: metric(pod, "job_scheduler_dispatches_total", task="every-minute")
        for name, pod in _by_name(demo.pods("scheduler")).items()
    }
    assert dispatched[_host(leader)] >= 1, dispatched
    completed = [
        metric(pod, "job_runs_total", job="send_digest", outcome="completed")
        for pod in demo.pods("worker")
    ]
    assert sum(completed) >= 1, completed


async def test_every_occurrence_reaches_the_durable_jobs_queue_and_completes(
    demo: Demo, db: asyncpg.Connection
) -> None:
    """Budget: two minutely occurrences. Invariant: the scheduler enqueues each on the
    DurableJob's queue "digests" (not the "default" the code declares send_digest on, where
    no worker of it listens), and every occurrence fired completes."""
    runs = "SELECT queue, state FROM ferry.jobs WHERE name = 'send_digest'"

    async def two_fired_all_done() -> list[Any] | None:
        rows = await db.fetch(runs)
        done = [r for r in rows if r["state"] == "completed"]
        return rows if len(rows) >= 2 and len(done) == len(rows) else None

    rows = await eventually(
        two_fired_all_done,
        what="two occurrences fired, every one completed",
        within_s=FIRE_BUDGET_S + 60,
        every_s=1,
        context=demo.logs,
    )
    assert {row["queue"] for row in rows} == {QUEUE}, rows
    print(f"measured: {len(rows)} occurrences fired onto {QUEUE!r}, all completed")
    # What the operator can see of the difference: the app declares send_digest on
    # "default", so runs its code enqueues would miss these workers. Flagged, still Ready.
    job = demo.cluster.plane.get("dj", "send-digest", "-n", NAMESPACE)
    ready = next(c for c in job["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "QueueMismatch"), ready
    assert 'declares job "send_digest" on queue "default"' in ready["message"]


def _by_name(pods: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {pod["metadata"]["name"]: pod for pod in pods}


def metric(pod: dict[str, Any], name: str, **labels: str) -> float:
    """A sample's value on a pod's ``/metrics`` (at its IP, on its metrics port); 0 if absent."""
    port = pod["spec"]["containers"][0]["ports"][0]["containerPort"]
    url = f"http://{pod['status']['podIP']}:{port}/metrics"
    with urllib.request.urlopen(url, timeout=5) as answer:
        text = answer.read().decode()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    return 0.0


async def test_a_deleted_busy_worker_pod_drains_and_its_run_resumes_on_another_pod_uncounted(
    demo: Demo, db: asyncpg.Connection
) -> None:
    """Budget: one 40-batch run, one pod deletion. Invariant: the pod exits within its grace
    period, the run resumes on another worker pod at the first unrecorded batch, every batch
    is recorded once, and the interrupted attempt is not counted."""
    plane = demo.cluster.plane
    driver = postgres_job_driver(demo.database.host_dsn, pool_max_size=2)
    await driver.open()
    set_job_driver(driver)
    try:
        run = await reindex_catalog.enqueue(
            {"catalog": "drain", "batches": 40, "batch_seconds": 1}, queue=QUEUE
        )
    finally:
        set_job_driver(None)
        await driver.close()
    job_id = int(run.job_id)
    steps = "SELECT count(*) FROM ferry.steps WHERE job_id = $1"
    await eventually(
        lambda: _at_least(db.fetchval(steps, job_id), 3),
        what="three batches recorded",
        within_s=RUN_BUDGET_S,
        every_s=0.5,
        context=demo.logs,
    )
    holder = await db.fetchval("SELECT locked_by FROM ferry.jobs WHERE id = $1", job_id)
    busy = _host(holder)
    pod = plane.get("pod", "-n", NAMESPACE, busy)
    grace = int(pod["spec"]["terminationGracePeriodSeconds"])

    deleted = time.monotonic()
    plane.kubectl("delete", "pod", "-n", NAMESPACE, busy, "--wait=false")
    resumed_by = await eventually(
        lambda: _resumed_elsewhere(db, job_id, busy),
        what="the run resumed on another worker pod",
        within_s=RUN_BUDGET_S,
        every_s=0.5,
        context=demo.logs,
    )
    resumed = time.monotonic()
    await eventually(
        lambda: plane.get("pod", "-n", NAMESPACE, busy) is None,
        what=f"pod {busy} gone",
        within_s=grace + 30,
        every_s=0.5,
        first_s=0.5,
    )
    gone = time.monotonic()
    done = await eventually(
        lambda: db.fetchrow(
            "SELECT attempts, result FROM ferry.jobs WHERE id = $1 AND state = 'completed'", job_id
        ),
        what="the resumed run completed",
        within_s=RUN_BUDGET_S,
        every_s=0.5,
        context=demo.logs,
    )
    assert done["attempts"] == 1, "the drained attempt was given back"
    assert json.loads(done["result"]) == {"batches": 40}
    assert await db.fetchval(steps, job_id) == 40
    assert _host(resumed_by) != busy
    assert gone - deleted <= grace, f"pod took {gone - deleted:.1f} s, grace {grace} s"
    print(
        f"measured: delete → run resumed on {_host(resumed_by)} {resumed - deleted:.1f} s, "
        f"delete → pod gone {gone - deleted:.1f} s (grace {grace} s, drain {DRAIN_SECONDS} s)"
    )


async def _at_least(count: Any, wanted: int) -> bool:
    return bool(await count >= wanted)


async def _resumed_elsewhere(db: asyncpg.Connection, job_id: int, busy: str) -> str | None:
    holder = await db.fetchval(
        "SELECT locked_by FROM ferry.jobs WHERE id = $1 AND state = 'running'", job_id
    )
    return holder if holder and _host(holder) != busy else None


async def test_deleting_the_scheduler_leader_pod_hands_the_lease_to_the_standby(
    demo: Demo, db: asyncpg.Connection
) -> None:
    """Budget: one leader pod deletion. Invariant: the standby pod takes the lease row."""
    plane = demo.cluster.plane
    leader = _host(await db.fetchval(LEADER))
    standby = {p["metadata"]["name"] for p in demo.pods("scheduler")} - {leader}
    assert standby, "two scheduler pods, one leading"

    # The deleted pod's log goes with it: follow it while it drains, for the failure message.
    last_words = demo.cluster.node.workdir / f"{leader}.log"
    with last_words.open("wb") as sink:
        following = await asyncio.create_subprocess_exec(
            str(plane.tools / "kubectl"),
            *("logs", "-f", "-n", NAMESPACE, leader),
            stdout=sink,
            stderr=asyncio.subprocess.STDOUT,
            env=plane.env(),
        )
    try:
        deleted = time.monotonic()
        plane.kubectl("delete", "pod", "-n", NAMESPACE, leader, "--wait=false")
        holder = await eventually(
            lambda: db.fetchval(f"{LEADER} AND holder NOT LIKE $1", f"{leader}:%"),
            what="another scheduler holding the lease",
            within_s=RUN_BUDGET_S,
            every_s=0.5,
            context=demo.logs,
        )
        took = time.monotonic() - deleted
    finally:
        # `kubectl logs -f` ends by itself once the pod is gone; it may already have.
        with contextlib.suppress(ProcessLookupError):
            following.terminate()
        await following.wait()
    assert _host(holder) in standby, (
        f"{_host(holder)} took the lease {took:.1f} s after the delete, not {standby}; the "
        f"deleted leader's log:\n{last_words.read_text(errors='replace')[-6000:]}\n{demo.logs()}"
    )
    print(f"measured: leader pod deleted → {_host(holder)} holds the lease {took:.1f} s")
