"""One namespace's reconcile: every DurableJob's worker, the scheduler, and their status.

Level-based: it reads everything afresh, so whatever woke it (a resource edit, a hand edit
of a Deployment, a deletion, the periodic refresh) gets the same answer, and an operator
restart changes nothing. Status is written only when it differs, so the MODIFIED event
a status write causes finds nothing to do and the loop settles.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from ferry_operator.kube import Kube
from ferry_operator.names import SCHEDULER_NAME, TASKS_CONFIGMAP
from ferry_operator.pods import Manifest
from ferry_operator.schedule import Verdict, plan_scheduler
from ferry_operator.scheduler import (
    scheduler_deployment,
    scheduler_disruption_budget,
    tasks_configmap,
)
from ferry_operator.service import metrics_service
from ferry_operator.status import durable_job_readiness, ready_condition
from ferry_operator.worker import worker_deployment

Warn = Callable[[Manifest, str, str], Awaitable[None]]
"""Posts a Warning event on a resource: ``(body, reason, message)``."""


async def reconcile_namespace(kube: Kube, namespace: str, warn: Warn) -> None:
    """Bring the namespace's owned Deployments, Services, ConfigMap and status in line with
    its CRs."""
    jobs = _live(await kube.list_resources("durablejobs", namespace))
    tasks = _live(await kube.list_resources("scheduledtasks", namespace))
    now = _now()
    for job in jobs:
        manifest = worker_deployment(job)
        await kube.apply(manifest)
        await kube.apply(metrics_service(manifest))
        deployment = await kube.read_deployment(namespace, manifest["metadata"]["name"])
        replicas = int(job["spec"].get("replicas", 1))
        ready, reason, message = durable_job_readiness(deployment, replicas)
        ready_replicas = int(((deployment or {}).get("status") or {}).get("readyReplicas") or 0)
        await _write_status(
            kube,
            "durablejobs",
            job,
            {"readyReplicas": ready_replicas, "replicas": replicas},
            Verdict(ready, reason, message),
            now,
        )
    plan = plan_scheduler(tasks, {job["metadata"]["name"]: job for job in jobs}, _now_ms())
    if plan.runs:
        await kube.apply(tasks_configmap(namespace, plan))
        scheduler = scheduler_deployment(namespace, plan)
        await kube.apply(scheduler)
        await kube.apply(metrics_service(scheduler))
        await kube.apply(scheduler_disruption_budget(namespace, plan))
    else:
        # GC removes them with their last owner; a task that became invalid or suspended
        # still owns them, so they are removed here.
        await kube.delete("Deployment", namespace, SCHEDULER_NAME)
        await kube.delete("Service", namespace, SCHEDULER_NAME)
        await kube.delete("PodDisruptionBudget", namespace, SCHEDULER_NAME)
        await kube.delete("ConfigMap", namespace, TASKS_CONFIGMAP)
    for task in tasks:
        verdict = plan.verdicts[task["metadata"]["name"]]
        previous = _ready(task)
        if not verdict.ready and (previous or {}).get("message") != verdict.message:
            await warn(task, verdict.reason, verdict.message)
        await _write_status(
            kube,
            "scheduledtasks",
            task,
            {"nextFire": verdict.next_fire, "lastFire": verdict.last_fire},
            verdict,
            now,
        )


async def _write_status(
    kube: Kube,
    plural: str,
    body: Manifest,
    fields: Mapping[str, Any],
    verdict: Verdict,
    now: str,
) -> None:
    current = body.get("status") or {}
    condition = ready_condition(
        ready=verdict.ready,
        reason=verdict.reason,
        message=verdict.message,
        now=now,
        previous=current.get("conditions") or [],
    )
    status = {
        **fields,
        "observedGeneration": body["metadata"].get("generation"),
        "conditions": [condition],
    }
    if any(current.get(key) != value for key, value in status.items()):
        meta = body["metadata"]
        await kube.patch_status(plural, meta["namespace"], meta["name"], status)


def _ready(body: Manifest) -> Mapping[str, Any] | None:
    conditions = (body.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == "Ready"), None)


def _live(items: list[Manifest]) -> list[Manifest]:
    """Resources not being deleted (their owned objects are on their way out)."""
    return [item for item in items if not item["metadata"].get("deletionTimestamp")]


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _now_ms() -> int:
    return int(time.time() * 1000)
