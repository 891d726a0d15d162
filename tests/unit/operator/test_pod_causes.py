"""Why pods do not run, read off their status as the kubelet and the scheduler write it, and
what a DurableJob and a ScheduledTask say about it."""

from __future__ import annotations

from typing import Any

from ferry_operator.causes import SCHEDULER, WORKERS, pod_cause
from ferry_operator.conditions import (
    State,
    Verdict,
    changed,
    conditions,
    durable_job_verdict,
    scheduler_verdict,
)

IMAGE = "ghcr.io/acme/shop:1.2.3"
REFUSAL = (
    "X_DB_UNREACHABLE: cannot connect to the database at postgresql://app:***@db:5432/shop: "
    'InvalidPasswordError: password authentication failed for user "app"\n'
    "fix: check DATABASE_URL (or --database-url)"
)


def _pod(
    name: str = "digest-worker-1", *, container: dict[str, Any] | None = None, **status: Any
) -> dict[str, Any]:
    statuses = [{"name": "ferry", "image": IMAGE, "ready": False, **(container or {})}]
    return {
        "metadata": {"name": name, "labels": {}},
        "status": {"containerStatuses": statuses, **status},
    }


def _waiting(reason: str, message: str = "") -> dict[str, Any]:
    return {"state": {"waiting": {"reason": reason, "message": message}}}


def test_an_image_that_cannot_be_pulled_names_the_image_and_the_kubelets_error() -> None:
    error = f'failed to pull and unpack image "{IMAGE}": dial tcp: lookup ghcr.io: no such host'
    verdict = pod_cause([_pod(container=_waiting("ErrImagePull", error))], WORKERS)
    assert verdict is not None
    assert (verdict.state, verdict.reason) == (State.STALLED, "ImagePullFailed")
    assert f'cannot pull image "{IMAGE}": {error}' in verdict.message
    assert "fix: set spec.image" in verdict.message and "imagePullSecrets" in verdict.message


def test_the_back_off_after_a_failed_pull_reads_the_same_so_no_second_event_is_posted() -> None:
    error = f'failed to pull and unpack image "{IMAGE}": not found'
    pulling = pod_cause([_pod(container=_waiting("ErrImagePull", error))], WORKERS)
    backing_off = pod_cause(
        [
            _pod(
                container=_waiting(
                    "ImagePullBackOff", f'Back-off pulling image "{IMAGE}": ErrImagePull: {error}'
                )
            )
        ],
        WORKERS,
    )
    assert pulling is not None and pulling == backing_off
    stored = conditions(pulling, generation=1, now="t", previous=[])
    assert not changed(backing_off, stored)


def test_a_back_off_without_the_error_still_names_the_image() -> None:
    verdict = pod_cause(
        [_pod(container=_waiting("ImagePullBackOff", f'Back-off pulling image "{IMAGE}"'))],
        WORKERS,
    )
    assert verdict is not None and f'"{IMAGE}" (ImagePullBackOff)' in verdict.message


def test_a_crash_loop_carries_the_roles_refusal_from_the_termination_log() -> None:
    crashed = {
        **_waiting("CrashLoopBackOff", "back-off 10s restarting failed container"),
        "restartCount": 2,
        "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "message": REFUSAL}},
    }
    verdict = pod_cause([_pod(container=crashed)], WORKERS)
    assert verdict is not None
    assert (verdict.state, verdict.reason) == (State.STALLED, "WorkersCrashLooping")
    assert "X_DB_UNREACHABLE: " in verdict.message
    assert 'password authentication failed for user "app"' in verdict.message
    assert "\n" not in verdict.message and "(exit code 1)" in verdict.message


def test_between_two_restarts_the_crash_loop_is_still_the_cause_not_a_start() -> None:
    """The container runs again, not yet ready, with its failure in lastState: the verdict
    does not flip to starting and back on every restart (one Warning event, not one each)."""
    restarting = {
        "state": {"running": {"startedAt": "2026-06-01T12:00:00Z"}},
        "restartCount": 3,
        "lastState": {"terminated": {"exitCode": 1, "message": REFUSAL}},
    }
    crashed = {**_waiting("CrashLoopBackOff"), "lastState": restarting["lastState"]}
    assert pod_cause([_pod(container=restarting)], WORKERS) == pod_cause(
        [_pod(container=crashed)], WORKERS
    )


def test_a_ready_container_that_once_failed_is_not_a_crash_loop() -> None:
    recovered = {
        "ready": True,
        "state": {"running": {}},
        "restartCount": 1,
        "lastState": {"terminated": {"exitCode": 1, "message": REFUSAL}},
    }
    assert pod_cause([_pod(container=recovered)], WORKERS) is None


def test_a_crash_without_a_termination_message_names_the_reason_and_exit_code() -> None:
    oom = {
        **_waiting("CrashLoopBackOff"),
        "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
    }
    verdict = pod_cause([_pod(container=oom)], WORKERS)
    assert verdict is not None and "keep exiting: OOMKilled (exit code 137)" in verdict.message


def test_an_unschedulable_pod_carries_the_schedulers_message() -> None:
    said = "0/1 nodes are available: 1 Insufficient memory."
    pending = _pod(
        conditions=[
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": said}
        ]
    )
    pending["status"]["containerStatuses"] = []
    verdict = pod_cause([pending], WORKERS)
    assert verdict is not None
    assert (verdict.reason, verdict.state) == ("Unschedulable", State.STALLED)
    assert said in verdict.message and "spec.resources.requests" in verdict.message


def test_a_missing_secret_key_is_a_container_config_error() -> None:
    said = "couldn't find key url in Secret shop/shop-db"
    verdict = pod_cause([_pod(container=_waiting("CreateContainerConfigError", said))], WORKERS)
    assert verdict is not None and verdict.reason == "ContainerConfigError"
    assert said in verdict.message and "spec.databaseSecretRef" in verdict.message


def test_causes_come_in_the_order_a_person_fixes_them_and_terminating_pods_do_not_count() -> None:
    crashing = _pod("a", container={**_waiting("CrashLoopBackOff"), "lastState": {}})
    unpullable = _pod("b", container=_waiting("ErrImagePull", "not found"))
    going = _pod("c", container=_waiting("CreateContainerConfigError", "gone"))
    going["metadata"]["deletionTimestamp"] = "2026-06-01T12:00:00Z"
    verdict = pod_cause([crashing, unpullable, going], WORKERS)
    assert verdict is not None and verdict.reason == "ImagePullFailed"
    assert pod_cause([going], WORKERS) is None
    healthy = _pod(container={"ready": True, "state": {"running": {}}})
    assert pod_cause([healthy], WORKERS) is None


def test_scheduler_pods_crash_loop_under_their_own_reason() -> None:
    crashed = {**_waiting("CrashLoopBackOff"), "lastState": {"terminated": {"exitCode": 1}}}
    verdict = pod_cause([_pod(container=crashed)], SCHEDULER)
    assert verdict is not None and verdict.reason == "SchedulerCrashLooping"
    assert "the scheduler pods keep exiting" in verdict.message


def _deployment(ready: int = 0, replicas: int = 2) -> dict[str, Any]:
    return {
        "metadata": {"generation": 1},
        "spec": {"replicas": replicas},
        "status": {"observedGeneration": 1, "updatedReplicas": replicas, "readyReplicas": ready},
    }


def test_a_durable_job_names_its_pods_cause_before_the_deployment_gives_up() -> None:
    cause = Verdict(State.STALLED, "ImagePullFailed", "cannot pull")
    assert durable_job_verdict(_deployment(), 2, None, cause) is cause
    missing = durable_job_verdict(_deployment(), 2, 'Secret "db" does not exist', cause)
    assert missing.reason == "SecretNotFound"
    assert durable_job_verdict(_deployment(), 2, None, None).reason == "WorkersStarting"


PLANNED = Verdict(
    State.READY, "Scheduled", "planned", next_fire="2026-06-02T03:00:00+02:00", last_fire=None
)


def test_a_task_is_ready_only_while_a_scheduler_pod_is() -> None:
    running = scheduler_verdict(PLANNED, _deployment(ready=1), None)
    assert (running.state, running.reason) == (State.READY, "Scheduled")
    assert "1/2 scheduler pods ready" in running.message
    starting = scheduler_verdict(PLANNED, _deployment(ready=0), None)
    assert (starting.state, starting.reason) == (State.RECONCILING, "SchedulerStarting")
    assert starting.next_fire == PLANNED.next_fire


def test_a_task_whose_scheduler_cannot_start_is_stalled_with_the_cause() -> None:
    cause = Verdict(State.STALLED, "SchedulerCrashLooping", "X_JOB_UNKNOWN: ...")
    verdict = scheduler_verdict(PLANNED, _deployment(ready=0), cause)
    assert (verdict.state, verdict.reason, verdict.message) == (
        State.STALLED,
        "SchedulerCrashLooping",
        "X_JOB_UNKNOWN: ...",
    )
    assert verdict.next_fire == PLANNED.next_fire
    assert scheduler_verdict(PLANNED, _deployment(ready=2), cause).reason == "Scheduled"


def test_a_refused_or_suspended_task_keeps_the_plans_verdict() -> None:
    for planned in (
        Verdict(State.STALLED, "InvalidCron", "X_INVARIANT"),
        Verdict(State.READY, "Suspended", "suspended"),
    ):
        assert scheduler_verdict(planned, _deployment(ready=0), None) is planned
