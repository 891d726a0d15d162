"""One namespace's reconcile: every DurableJob's worker, the scheduler, and their status.

Level-based: it reads everything afresh, so whatever woke it (a resource edit, a hand edit
of a Deployment, a deletion, the periodic refresh) gets the same answer, and an operator
restart changes nothing. Status is written only when it differs, so the MODIFIED event
a status write causes finds nothing to do and the loop settles.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ferry._clock import Clock
from ferry_operator.autoscale import desired_replicas
from ferry_operator.causes import SCHEDULER, WORKERS, pod_cause
from ferry_operator.conditions import (
    State,
    Verdict,
    changed,
    conditions,
    durable_job_verdict,
    queue_mismatch,
    scheduler_verdict,
    secret_not_found,
    stamp,
)
from ferry_operator.config import DatabaseRef
from ferry_operator.events import PostEvent
from ferry_operator.kube import Kube, operator_owned
from ferry_operator.measure import Fetch, measure
from ferry_operator.names import SCHEDULER_NAME, TASKS_CONFIGMAP
from ferry_operator.pods import Manifest, database_ref, with_database_default
from ferry_operator.schedule import app_identity, plan_scheduler
from ferry_operator.scheduler import (
    scheduler_deployment,
    scheduler_disruption_budget,
    scheduler_labels,
    tasks_configmap,
)
from ferry_operator.service import metrics_service
from ferry_operator.worker import (
    job_name,
    job_queue,
    worker_deployment,
    worker_disruption_budget,
    worker_labels,
    worker_name,
    worker_selector,
)


async def reconcile_namespace(
    kube: Kube,
    namespace: str,
    post: PostEvent,
    default_secret: DatabaseRef,
    clock: Clock,
    autoscaled: Callable[[str, bool], None] = lambda namespace, any_: None,
    fetch: Fetch | None = None,
) -> bool:
    """Bring the namespace's owned objects and the resources' status in line with its
    resources; whether the namespace has any ferry resource left (worth refreshing).
    ``autoscaled`` hears whether any of its DurableJobs autoscales (the autoscale loop's
    namespaces); ``fetch`` reads the scheduler leader's ``/metrics``, where its app says on
    which queue it declares each job (without it, nothing is compared)."""
    declared = _live(await kube.list_resources("durablejobs", namespace))
    jobs = [with_database_default(job, default_secret) for job in declared]
    tasks = _live(await kube.list_resources("scheduledtasks", namespace))
    pods = await kube.owned_pods(namespace) if declared or tasks else []
    now_ms = clock.now_ms()
    now = stamp(now_ms)
    missing = await _missing_secrets(kube, namespace, declared, jobs)
    plan = plan_scheduler(tasks, {job["metadata"]["name"]: job for job in jobs}, now_ms, missing)
    autoscaled(namespace, bool(plan.measured))
    schedulers = _selected(pods, scheduler_labels())
    served = await measure(schedulers, fetch) if fetch and plan.runs else None
    for job in jobs:
        name = job["metadata"]["name"]
        refused = missing.get(name)
        cause = plan.unmeasurable.get(name) or pod_cause(
            _selected(pods, worker_labels(name)), WORKERS
        )
        # Only the scheduler's own app says where it declares a job.
        same_app = plan.source is not None and app_identity(job) == app_identity(plan.source)
        app_queue = served.declared.get(job_name(job)) if served and same_app else None
        await _reconcile_worker(kube, job, refused, cause, app_queue, post, now)
    if plan.runs:
        existing = await kube.metadata("Deployment", namespace, SCHEDULER_NAME)
        if existing is not None and not operator_owned(existing):
            plan.stall(_conflict(SCHEDULER_NAME, "rename or delete that Deployment"))
        else:
            await kube.apply(tasks_configmap(namespace, plan))
            scheduler = scheduler_deployment(namespace, plan)
            running = await kube.apply(scheduler)
            await kube.apply(metrics_service(scheduler))
            await kube.apply(scheduler_disruption_budget(namespace, plan))
            cause = pod_cause(schedulers, SCHEDULER)
            for owner in plan.owners:
                name = str(owner["metadata"]["name"])
                plan.verdicts[name] = scheduler_verdict(plan.verdicts[name], running, cause)
    else:
        # GC removes them with their last owner; a task that became invalid or suspended
        # still owns them, so they are removed here — only if they are the operator's.
        for kind in ("Deployment", "Service", "PodDisruptionBudget"):
            await kube.delete_owned(kind, namespace, SCHEDULER_NAME)
        await kube.delete_owned("ConfigMap", namespace, TASKS_CONFIGMAP)
    for task in tasks:
        verdict = plan.verdicts[task["metadata"]["name"]]
        fields = {"nextFire": verdict.next_fire, "lastFire": verdict.last_fire}
        await _settle(kube, "scheduledtasks", task, fields, verdict, post, now)
    return bool(jobs or tasks)


async def _missing_secrets(
    kube: Kube, namespace: str, declared: list[Manifest], jobs: list[Manifest]
) -> dict[str, str]:
    """Why each DurableJob whose database Secret does not exist cannot start, by name (each
    Secret is asked for once, as metadata only)."""
    exists: dict[str, bool] = {}
    missing: dict[str, str] = {}
    for own, job in zip(declared, jobs, strict=True):
        ref = database_ref(job["spec"])
        if ref.name not in exists:
            exists[ref.name] = await kube.metadata("Secret", namespace, ref.name) is not None
        if not exists[ref.name]:
            defaulted = not own["spec"].get("databaseSecretRef")
            missing[job["metadata"]["name"]] = secret_not_found(namespace, ref, defaulted)
    return missing


async def _reconcile_worker(
    kube: Kube,
    job: Manifest,
    missing_secret: str | None,
    cause: Verdict | None,
    declared: str | None,
    post: PostEvent,
    now: str,
) -> None:
    """A DurableJob's worker Deployment, Service and PodDisruptionBudget, and its status;
    ``declared`` is the queue the app declares its job on, when the scheduler said."""
    namespace, name = job["metadata"]["namespace"], worker_name(job)
    desired = desired_replicas(job)
    before = await kube.read("Deployment", namespace, name)
    if before is not None and not operator_owned(before["metadata"]):
        deployment = None
        verdict = _conflict(
            name, "rename or delete that Deployment, or give this DurableJob another name"
        )
    else:
        manifest = worker_deployment(job)
        deployment = await kube.apply(manifest)
        await kube.apply(metrics_service(manifest))
        await kube.apply(worker_disruption_budget(job))
        verdict = durable_job_verdict(deployment, desired, missing_secret, cause)
        if verdict.ready:
            verdict = queue_mismatch(job_name(job), job_queue(job), declared) or verdict
        previous = int((before or {}).get("spec", {}).get("replicas", desired))
        if before is not None and previous != desired:
            why = ((job.get("status") or {}).get("autoscaling") or {}).get("message")
            scaled = f"workers scaled from {previous} to {desired}"
            await post(job, "Normal", "Scaled", f"{scaled}; autoscaler: {why}" if why else scaled)
    status = (deployment or {}).get("status") or {}
    fields = {
        "replicas": int(status.get("replicas") or 0),
        "readyReplicas": int(status.get("readyReplicas") or 0),
        "desiredReplicas": desired,
        "selector": worker_selector(job),
    }
    await _settle(kube, "durablejobs", job, fields, verdict, post, now)


def _conflict(name: str, fix: str) -> Verdict:
    """Someone else's Deployment has the name the operator would write: it is left alone."""
    return Verdict(
        State.STALLED,
        "DeploymentConflict",
        f'Deployment "{name}" already exists and is not the operator\'s (it lacks the '
        "app.kubernetes.io/managed-by: ferry-operator label or a ferry owner), so it is left "
        f"alone; fix: {fix}",
    )


async def _settle(
    kube: Kube,
    plural: str,
    body: Manifest,
    fields: Mapping[str, Any],
    verdict: Verdict,
    post: PostEvent,
    now: str,
) -> None:
    """Announce a changed verdict with an event, and write the status if it differs."""
    current = body.get("status") or {}
    previous = current.get("conditions") or []
    if changed(verdict, previous):
        await post(body, verdict.event_type, verdict.reason, verdict.message)
    generation = int(body["metadata"].get("generation") or 0)
    status = {
        **fields,
        "observedGeneration": generation,
        "conditions": conditions(verdict, generation=generation, now=now, previous=previous),
    }
    if any(current.get(key) != value for key, value in status.items()):
        meta = body["metadata"]
        await kube.patch_status(plural, meta["namespace"], meta["name"], status)


def _selected(pods: list[Manifest], selector: Mapping[str, str]) -> list[Manifest]:
    """The pods whose labels carry every label of ``selector``."""
    return [
        pod
        for pod in pods
        if all((pod["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items())
    ]


def _live(items: list[Manifest]) -> list[Manifest]:
    """Resources not being deleted (their owned objects are on their way out)."""
    return [item for item in items if not item["metadata"].get("deletionTimestamp")]
