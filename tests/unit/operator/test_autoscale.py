"""``spec.autoscaling``: worker counts from the queue's backlog — up at once, down after a
cooldown, to zero and back — and where the backlog is read from."""

from __future__ import annotations

from typing import Any

from operator_bodies import durable_job, scheduled_task

from ferry_operator.autoscale import (
    Policy,
    QueueSample,
    decide,
    desired_replicas,
    needed,
    policy_of,
)
from ferry_operator.conditions import stamp
from ferry_operator.measure import Measurement, measure, metrics_url, read_metrics
from ferry_operator.schedule import plan_scheduler
from ferry_operator.scheduler import scheduler_deployment
from ferry_operator.worker import worker_deployment

NOW_MS = 1_780_315_200_000
POLICY = Policy(min_replicas=0, max_replicas=4, target=10, cooldown_ms=60_000)
SECOND = 1_000


def _step(stored: dict[str, Any], backlog: int | None, at_ms: int) -> dict[str, Any]:
    sample = None if backlog is None else QueueSample(backlog=backlog, oldest_age_s=3.0)
    return decide(POLICY, stored, sample, "reports", at_ms)


def test_the_backlog_needs_one_replica_per_target_within_the_bounds() -> None:
    assert [needed(POLICY, b) for b in (0, 1, 10, 11, 39, 40, 2_000)] == [0, 1, 1, 2, 4, 4, 4]
    floor = Policy(min_replicas=2, max_replicas=4, target=10, cooldown_ms=0)
    assert needed(floor, 0) == 2


def test_the_first_due_run_brings_a_worker_up_from_zero_at_once() -> None:
    idle = _step({}, 0, NOW_MS)
    assert idle["replicas"] == 0 and "lastScaleTime" not in idle
    assert idle["message"].startswith('keeping 0 replicas: queue "reports" has a backlog of 0')
    up = _step(idle, 1, NOW_MS + SECOND)
    assert up["replicas"] == 1 and up["lastScaleTime"] == stamp(NOW_MS + SECOND)
    assert up["message"].startswith("scaled up from 0 to 1: ")
    assert 'queue "reports" has a backlog of 1 (due + running)' in up["message"]
    assert "oldest due run waiting 3s" in up["message"] and "at 10 per replica" in up["message"]


def test_a_burst_goes_straight_to_the_replicas_it_needs() -> None:
    assert _step({"replicas": 1}, 2_000, NOW_MS)["replicas"] == 4


def test_a_run_waiting_a_whole_cooldown_adds_a_replica_whatever_the_count_says() -> None:
    """Two pods for a backlog of 15 at 10 per pod is what the count asks; a due run unclaimed
    for the whole cooldown says they do not keep up."""
    waited = QueueSample(backlog=15, oldest_age_s=60.0)
    more = decide(POLICY, {"replicas": 2, "measured": True}, waited, "reports", NOW_MS)
    assert more["replicas"] == 3 and more["message"].startswith("scaled up from 2 to 3")
    assert "the oldest due run waiting 60s" in more["message"]
    at_max = decide(POLICY, {"replicas": 4, "measured": True}, waited, "reports", NOW_MS)
    assert at_max["replicas"] == 4
    fresh = QueueSample(backlog=15, oldest_age_s=59.0)
    assert (
        decide(POLICY, {"replicas": 2, "measured": True}, fresh, "reports", NOW_MS)["replicas"] == 2
    )


def test_scaling_down_waits_a_whole_cooldown_and_goes_to_the_most_needed_meanwhile() -> None:
    busy = {"replicas": 4}
    holding = _step(busy, 15, NOW_MS)
    assert holding["replicas"] == 4
    assert holding["scaleDownSince"] == stamp(NOW_MS) and holding["scaleDownTo"] == 2
    assert holding["message"].startswith("holding 4 replicas for the cooldown")
    quieter = _step(holding, 5, NOW_MS + 30 * SECOND)
    assert holding["measured"] is True
    assert quieter == holding, "nothing new to write: still within the cooldown"
    bumped = _step(quieter, 28, NOW_MS + 40 * SECOND)
    assert (bumped["replicas"], bumped["scaleDownTo"]) == (4, 3)
    down = _step(bumped, 5, NOW_MS + 60 * SECOND)
    assert down["replicas"] == 3, "the most the backlog needed during the cooldown"
    assert "scaleDownSince" not in down and "scaleDownTo" not in down
    assert down["message"].startswith("scaled down from 4 to 3 after 60s needing fewer")


def test_a_backlog_that_needs_them_all_again_restarts_the_cooldown() -> None:
    holding = _step({"replicas": 4}, 0, NOW_MS)
    back = _step(holding, 40, NOW_MS + 59 * SECOND)
    assert back["replicas"] == 4 and "scaleDownSince" not in back
    assert back["message"].startswith("keeping 4 replicas")
    again = _step(back, 0, NOW_MS + 61 * SECOND)
    assert again["replicas"] == 4 and again["scaleDownSince"] == stamp(NOW_MS + 61 * SECOND)


def test_an_idle_queue_goes_back_to_zero_after_the_cooldown() -> None:
    state: dict[str, Any] = {"replicas": 4}
    for at in range(0, 61, 5):
        state = _step(state, 0, NOW_MS + at * SECOND)
    assert state["replicas"] == 0


def test_without_a_measurement_the_decision_holds_and_says_so() -> None:
    first = _step({}, None, NOW_MS)
    assert (first["replicas"], first["measured"]) == (0, False)
    held = _step({"replicas": 3, "measured": True, "message": "scaled up"}, None, NOW_MS)
    assert (held["replicas"], held["measured"]) == (3, False)
    assert held["message"].startswith("holding 3 replicas: the queue's backlog is not measured")
    assert _step(held, None, NOW_MS + SECOND) == held, "nothing new to write"
    measured = _step(held, 30, NOW_MS + 2 * SECOND)
    assert measured["measured"] and measured["message"].startswith("keeping 3 replicas: ")


def test_the_policy_reads_the_spec_with_its_defaults() -> None:
    assert policy_of({"replicas": 2}) is None
    policy = policy_of({"concurrency": 25, "autoscaling": {"maxReplicas": 5}})
    assert policy == Policy(min_replicas=0, max_replicas=5, target=25, cooldown_ms=300_000)
    given = policy_of({"autoscaling": {"maxReplicas": 5, "targetBacklogPerReplica": 7}})
    assert given is not None and given.target == 7
    timed = policy_of({"autoscaling": {"maxReplicas": 5, "cooldown": "1m30s"}})
    assert timed is not None and timed.cooldown_ms == 90_000


def test_the_worker_deployment_runs_the_autoscalers_replicas_and_ignores_spec_replicas() -> None:
    job = durable_job(replicas=5, autoscaling={"minReplicas": 0, "maxReplicas": 3})
    assert desired_replicas(job) == 0, "minReplicas before the first decision"
    job["status"] = {"autoscaling": {"replicas": 2}}
    assert worker_deployment(job)["spec"]["replicas"] == 2
    job["status"] = {"autoscaling": {"replicas": 9}}
    assert desired_replicas(job) == 3, "a lowered maxReplicas holds at once"
    assert worker_deployment(durable_job(replicas=5))["spec"]["replicas"] == 5


LEADER = """# HELP job_scheduler_leader 1 while this node holds an unexpired leader lease
# TYPE job_scheduler_leader gauge
job_scheduler_leader 1.0
# TYPE job_queue_backlog gauge
job_queue_backlog{queue="reports"} 2000.0
job_queue_backlog{queue="default"} 0.0
# TYPE job_queue_oldest_age_seconds gauge
job_queue_oldest_age_seconds{queue="reports"} 4.5
# TYPE job_declared_info gauge
job_declared_info{job="reindex_catalog",queue="default"} 1.0
"""
STANDBY = "# TYPE job_scheduler_leader gauge\njob_scheduler_leader 0.0\n"


def test_the_leaders_metrics_give_each_queues_backlog_and_age_and_the_declared_queues() -> None:
    leading, served = read_metrics(LEADER, "s-b")
    assert leading and served.leader == "s-b"
    assert served.queues["reports"] == QueueSample(backlog=2_000, oldest_age_s=4.5)
    assert served.queues["default"] == QueueSample(backlog=0, oldest_age_s=0.0)
    assert served.declared == {"reindex_catalog": "default"}
    assert read_metrics(STANDBY) == (False, Measurement("", {}, {}))


def _scheduler_pod(name: str, ip: str, phase: str = "Running") -> dict[str, Any]:
    container = {"name": "ferry", "ports": [{"name": "metrics", "containerPort": 9090}]}
    return {
        "metadata": {"name": name},
        "spec": {"containers": [container]},
        "status": {"phase": phase, "podIP": ip},
    }


async def test_the_measurement_is_the_leading_pods_and_nobody_elses() -> None:
    pages = {
        "http://10.0.0.1:9090/metrics": STANDBY,
        "http://10.0.0.2:9090/metrics": LEADER,
    }
    asked: list[str] = []

    async def fetch(url: str) -> str:
        asked.append(url)
        if url not in pages:
            raise ConnectionError(url)
        return pages[url]

    pods = [
        _scheduler_pod("s-0-gone", "10.0.0.9"),
        _scheduler_pod("s-a", "10.0.0.1"),
        _scheduler_pod("s-b", "10.0.0.2"),
        _scheduler_pod("s-pending", "", phase="Pending"),
    ]
    found = await measure(pods, fetch)
    assert isinstance(found, Measurement) and found.leader == "s-b"
    assert found.queue("reports").backlog == 2_000
    assert found.queue("never-used") == QueueSample(backlog=0, oldest_age_s=0.0)
    assert "http://10.0.0.9:9090/metrics" in asked, "an unreachable pod is skipped"
    assert await measure(pods[:2], fetch) is None, "no leader: no measurement"
    assert metrics_url(_scheduler_pod("v6", "fd00::5")) == "http://[fd00::5]:9090/metrics"


def test_an_autoscaled_durable_job_gets_the_namespaces_scheduler_even_without_tasks() -> None:
    scaled = durable_job("reports", autoscaling={"maxReplicas": 3})
    plan = plan_scheduler([], {"reports": scaled}, NOW_MS)
    assert plan.runs and plan.tasks == [] and plan.source is scaled
    owners = scheduler_deployment("shop", plan)["metadata"]["ownerReferences"]
    assert [(o["kind"], o["name"], o["controller"]) for o in owners] == [
        ("DurableJob", "reports", False)
    ]
    assert not plan_scheduler([], {"digest": durable_job("digest")}, NOW_MS).runs


def test_an_autoscaled_durable_job_on_another_database_is_unmeasurable() -> None:
    digest = durable_job("digest", job="send_digest")
    elsewhere = durable_job(
        "reports", autoscaling={"maxReplicas": 3}, databaseSecretRef={"name": "other-db"}
    )
    same_db = durable_job("mail", autoscaling={"maxReplicas": 3}, image="other:1")
    plan = plan_scheduler(
        [scheduled_task()], {"digest": digest, "reports": elsewhere, "mail": same_db}, NOW_MS
    )
    assert plan.source is digest
    assert [j["metadata"]["name"] for j in plan.measured] == ["mail"]
    verdict = plan.unmeasurable["reports"]
    assert verdict.reason == "BacklogUnmeasurable"
    assert 'Secret "shop-db"' in verdict.message and "fix: give it the databaseSecretRef" in (
        verdict.message
    )
