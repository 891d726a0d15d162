"""A namespace's ScheduledTasks → the scheduler's task set and each task's verdict."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from operator_bodies import durable_job, scheduled_task

from ferry.errors import FerryError
from ferry.tasks._cron import parse_cron
from ferry.tasks._occurrences import validate_zone
from ferry_operator.conditions import State, Verdict, queue_mismatch
from ferry_operator.names import TASKS_DIGEST, TASKS_FILE
from ferry_operator.schedule import plan_scheduler
from ferry_operator.scheduler import scheduler_deployment, tasks_configmap

# 2026-06-01T12:00:00Z
NOW_MS = 1_780_315_200_000
JOBS = {"digest": durable_job("digest", job="send_digest")}


def _refusal(call: Any) -> FerryError:
    with pytest.raises(FerryError) as refused:
        call()
    return refused.value


def test_a_zone_the_runtime_refuses_is_stalled_with_the_runtimes_code_and_message() -> None:
    plan = plan_scheduler([scheduled_task(timeZone="Mars/Olympus")], JOBS, NOW_MS)
    verdict = plan.verdicts["nightly"]
    expected = _refusal(lambda: validate_zone("Mars/Olympus", owner='ScheduledTask "nightly"'))
    assert (verdict.state, verdict.reason) == (State.STALLED, "InvalidTimeZone")
    assert verdict.message.startswith(f"{expected.code}: {expected.message}")
    assert not plan.runs


def test_a_zone_fix_names_the_field_and_the_runtimes_guess_in_yaml_terms() -> None:
    verdict = plan_scheduler([scheduled_task(timeZone="Bogota")], JOBS, NOW_MS).verdicts["nightly"]
    assert verdict.message.endswith(
        "fix: set spec.timeZone to an IANA zone id, e.g. spec.timeZone: America/Bogota"
    )


def test_a_cron_the_runtime_refuses_is_stalled_and_never_reaches_the_scheduler() -> None:
    good = scheduled_task("hourly", cron="0 * * * *")
    plan = plan_scheduler([scheduled_task(cron="61 * * * *"), good], JOBS, NOW_MS)
    expected = _refusal(lambda: parse_cron("61 * * * *", owner='ScheduledTask "nightly"'))
    verdict = plan.verdicts["nightly"]
    assert (verdict.state, verdict.reason) == (State.STALLED, "InvalidCron")
    assert verdict.message.startswith(f"X_INVARIANT: {expected.message}")
    assert f"fix: in spec.cron, {expected.fix}" in verdict.message
    assert [t["name"] for t in plan.tasks] == ["hourly"]
    assert plan.owners == [good]


@pytest.mark.parametrize(
    "spec",
    [
        {"timeZone": "Mars/Olympus"},
        {"timeZone": "+02:00"},
        {"timeZone": "localtime"},
        {"cron": "61 * * * *"},
        {"cron": "@daily"},
        {"cron": "0 0 30 2 *"},
        {"entries": [{"job": "nope"}]},
    ],
)
def test_fix_hints_are_in_the_resources_yaml_terms_never_python(spec: dict[str, Any]) -> None:
    verdict = plan_scheduler([scheduled_task(**spec)], JOBS, NOW_MS).verdicts["nightly"]
    fix = verdict.message.split("; fix: ", 1)[1]
    assert "spec." in fix
    assert 'tz="' not in fix and '("' not in fix and "task(" not in fix


def test_cron_and_zone_are_judged_before_the_entries_references() -> None:
    broken = scheduled_task(timeZone="Mars/Olympus", entries=[{"job": "nope"}])
    assert plan_scheduler([broken], JOBS, NOW_MS).verdicts["nightly"].reason == "InvalidTimeZone"
    broken = scheduled_task(cron="61 * * * *", entries=[{"job": "nope"}])
    assert plan_scheduler([broken], JOBS, NOW_MS).verdicts["nightly"].reason == "InvalidCron"


def test_an_entry_naming_a_missing_durable_job_is_refused_listing_the_ones_there() -> None:
    task = scheduled_task(entries=[{"job": "nope"}])
    verdict = plan_scheduler([task], JOBS, NOW_MS).verdicts["nightly"]
    assert (verdict.ready, verdict.reason) == (False, "JobNotFound")
    assert verdict.message.startswith('X_INVARIANT: ScheduledTask "nightly" entry 0 names')
    assert 'DurableJob "nope"' in verdict.message
    assert "fix: create the DurableJob, or set spec.entries[0].job to one of: digest" in (
        verdict.message
    )


def test_a_task_firing_another_apps_job_is_refused_because_one_scheduler_loads_one_app() -> None:
    jobs = {**JOBS, "billing": durable_job("billing", handler="billing.app:api")}
    first = scheduled_task("a-digest")
    second = scheduled_task("b-billing", entries=[{"job": "billing"}])
    plan = plan_scheduler([second, first], jobs, NOW_MS)
    assert plan.verdicts["a-digest"].ready
    assert plan.verdicts["b-billing"].reason == "AppMismatch"
    assert plan.source is not None and plan.source["metadata"]["name"] == "digest"


def test_a_missing_scheduler_secret_stalls_the_task_but_keeps_it_scheduled() -> None:
    plan = plan_scheduler([scheduled_task()], JOBS, NOW_MS, {"digest": 'Secret "shop-db" ...'})
    verdict = plan.verdicts["nightly"]
    assert (verdict.state, verdict.reason) == (State.STALLED, "SecretNotFound")
    assert verdict.message == 'Secret "shop-db" ...'
    assert [t["name"] for t in plan.tasks] == ["nightly"]


def test_a_plan_whose_scheduler_cannot_run_stalls_every_accepted_task_only() -> None:
    refused = scheduled_task("refused", timeZone="Mars/Olympus")
    plan = plan_scheduler([scheduled_task("a"), scheduled_task("b"), refused], JOBS, NOW_MS)
    blocked = Verdict(State.STALLED, "DeploymentConflict", "someone else's ferry-scheduler")
    plan.stall(blocked)
    assert plan.verdicts["a"] is blocked and plan.verdicts["b"] is blocked
    assert plan.verdicts["refused"].reason == "InvalidTimeZone"


def test_entries_carry_the_apps_job_name_the_durable_jobs_queue_and_the_input() -> None:
    jobs = {"digest": durable_job("digest", job="send_digest", queue="digests")}
    plan = plan_scheduler([scheduled_task(catchUp="run-once", maxCatchUp=3)], jobs, NOW_MS)
    assert plan.document() == {
        "tasks": [
            {
                "name": "nightly",
                "cron": "0 3 * * *",
                "timeZone": "Europe/Berlin",
                "catchUp": "run-once",
                "maxCatchUp": 3,
                "entries": [
                    {"job": "send_digest", "queue": "digests", "input": {"occurrence_ms": 0}}
                ],
            }
        ]
    }


def test_an_entry_of_a_durable_job_without_a_queue_goes_to_the_default_queue_it_polls() -> None:
    [task] = plan_scheduler([scheduled_task()], JOBS, NOW_MS).document()["tasks"]
    assert [entry["queue"] for entry in task["entries"]] == ["default"]


def test_next_and_last_fire_are_shown_in_the_tasks_own_zone() -> None:
    verdict = plan_scheduler([scheduled_task()], JOBS, NOW_MS).verdicts["nightly"]
    assert verdict.ready and verdict.reason == "Scheduled"
    assert verdict.next_fire == "2026-06-02T03:00:00+02:00"
    assert verdict.last_fire == "2026-06-01T03:00:00+02:00"
    assert datetime.fromisoformat(verdict.next_fire).utcoffset() is not None


def test_no_last_fire_before_the_tasks_first_occurrence() -> None:
    task = scheduled_task()
    task["metadata"]["creationTimestamp"] = "2026-06-01T11:00:00Z"
    assert plan_scheduler([task], JOBS, NOW_MS).verdicts["nightly"].last_fire is None


def test_a_suspended_task_is_ready_but_no_scheduler_runs_it() -> None:
    plan = plan_scheduler([scheduled_task(suspend=True)], JOBS, NOW_MS)
    assert plan.verdicts["nightly"].ready and plan.verdicts["nightly"].reason == "Suspended"
    assert plan.verdicts["nightly"].next_fire is None
    assert not plan.runs and plan.tasks == []


def test_the_plan_does_not_depend_on_listing_order() -> None:
    tasks = [scheduled_task(f"t{i}", cron=f"{i} * * * *") for i in range(5)]
    forward = plan_scheduler(tasks, JOBS, NOW_MS)
    backward = plan_scheduler(list(reversed(tasks)), JOBS, NOW_MS)
    assert forward.document() == backward.document()
    assert tasks_configmap("shop", forward) == tasks_configmap("shop", backward)


def test_the_scheduler_is_a_leader_and_a_warm_standby_over_the_task_file() -> None:
    plan = plan_scheduler([scheduled_task()], JOBS, NOW_MS)
    deployment = scheduler_deployment("shop", plan)
    assert deployment["spec"]["replicas"] == 2
    pod = deployment["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in pod["containers"][0]["env"]}
    assert env["ROLE"] == "scheduler"
    assert env["FERRY_APP"] == "ferry.scheduler_config:api"
    assert env["FERRY_TASKS_APP"] == "examples.demo.app:api"
    assert env["FERRY_TASKS_FILE"] == TASKS_FILE
    assert env["DATABASE_URL"] == {"secretKeyRef": {"name": "shop-db", "key": "url"}}
    configmap = tasks_configmap("shop", plan)
    assert json.loads(configmap["data"]["tasks.json"]) == plan.document()
    owners = deployment["metadata"]["ownerReferences"]
    assert [(o["kind"], o["name"], o["controller"]) for o in owners] == [
        ("ScheduledTask", "nightly", False)
    ]


def test_leader_and_standby_prefer_different_nodes_and_zones() -> None:
    plan = plan_scheduler([scheduled_task()], JOBS, NOW_MS)
    pod = scheduler_deployment("shop", plan)["spec"]["template"]["spec"]
    spread = pod["topologySpreadConstraints"]
    assert {c["topologyKey"] for c in spread} == {
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
    }
    for constraint in spread:
        assert constraint["labelSelector"]["matchLabels"] == {
            "app.kubernetes.io/component": "scheduler",
            "app.kubernetes.io/instance": "ferry-scheduler",
        }
        # Preferred, not required: a one-node cluster still runs both.
        assert constraint["whenUnsatisfiable"] == "ScheduleAnyway"
        assert constraint["matchLabelKeys"] == ["pod-template-hash"]


def test_a_task_change_rolls_the_scheduler_and_no_change_does_not() -> None:
    def digest(cron: str) -> str:
        plan = plan_scheduler([scheduled_task(cron=cron)], JOBS, NOW_MS)
        annotations = scheduler_deployment("shop", plan)["spec"]["template"]["metadata"]
        return str(annotations["annotations"][TASKS_DIGEST])

    assert digest("0 3 * * *") == digest("0 3 * * *")
    assert digest("0 3 * * *") != digest("0 4 * * *")


def test_a_durable_job_polling_another_queue_than_the_app_declares_is_flagged() -> None:
    """Its scheduled runs reach it (the task file routes them); the code's own enqueues do
    not. The workers run, so it stays Ready, but a Warning names both queues and the fix."""
    flagged = queue_mismatch("send_digest", "digests", "default")
    assert flagged is not None
    assert (flagged.state, flagged.reason, flagged.event_type) == (
        State.READY,
        "QueueMismatch",
        "Warning",
    )
    assert 'declares job "send_digest" on queue "default"' in flagged.message
    assert 'these workers poll "digests"' in flagged.message
    assert 'fix: set spec.queue: default, or declare the job with queue="digests"' in (
        flagged.message
    )
    assert queue_mismatch("send_digest", "default", "default") is None
    assert queue_mismatch("send_digest", "digests", None) is None, "nothing declared: unknown"
