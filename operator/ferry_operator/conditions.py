"""Verdicts and the kstatus conditions they become: ``Ready``, ``Reconciling``, ``Stalled``.

kstatus (what ``kubectl wait``, Flux, Argo CD and ``cli-utils`` read) asks for exactly these:
``Reconciling=True`` while the operator or the cluster is still converging, ``Stalled=True``
when it cannot without a person acting, and ``observedGeneration`` on the status and on each
condition, so a reader can tell a verdict about the current spec from one about the last.
All three are always written, sharing the verdict's reason and message, so ``kubectl describe``
shows one story.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from ferry.errors import FerryError
from ferry_operator.config import DatabaseRef

Condition = dict[str, Any]


class State(Enum):
    """Where a resource stands; each state sets exactly one condition True."""

    READY = "Ready"
    RECONCILING = "Reconciling"
    STALLED = "Stalled"


@dataclass(frozen=True)
class Verdict:
    """A resource's state with a CamelCase reason and a message a person can act on; for a
    ScheduledTask also its next and last fire."""

    state: State
    reason: str
    message: str
    next_fire: str | None = None
    last_fire: str | None = None
    warning: bool = False
    """Ready, but with something a person should fix (announced as a Warning)."""

    @property
    def ready(self) -> bool:
        """Whether the resource does what its spec asks."""
        return self.state is State.READY

    @property
    def event_type(self) -> str:
        """The Event type announcing this verdict: a stall, or a warning, needs someone."""
        return "Warning" if self.state is State.STALLED or self.warning else "Normal"


def stamp(now_ms: int) -> str:
    """An instant as a Kubernetes ``Time`` (RFC 3339, whole seconds, UTC)."""
    return datetime.fromtimestamp(now_ms // 1000, UTC).isoformat().replace("+00:00", "Z")


def stalled(reason: str, refused: FerryError, fix: str | None = None) -> Verdict:
    """A refusal: the ``X_*`` code and message it carries, and a fix in the resource's terms."""
    return Verdict(
        State.STALLED, reason, f"{refused.code}: {refused.message}; fix: {fix or refused.fix}"
    )


def conditions(
    verdict: Verdict, *, generation: int, now: str, previous: Sequence[Mapping[str, Any]]
) -> list[Condition]:
    """The three kstatus conditions; a ``lastTransitionTime`` moves only when its status flips."""
    before = {c.get("type"): c for c in previous}
    built = []
    for state in State:
        status = "True" if verdict.state is state else "False"
        old = before.get(state.value)
        since = old["lastTransitionTime"] if old and old.get("status") == status else now
        built.append(
            {
                "type": state.value,
                "status": status,
                "observedGeneration": generation,
                "reason": verdict.reason,
                "message": verdict.message,
                "lastTransitionTime": since,
            }
        )
    return built


def changed(verdict: Verdict, previous: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``verdict`` is news against the stored conditions: another reason or status,
    or another message for a stall (a second, different refusal is news too)."""
    ready = next((c for c in previous if c.get("type") == State.READY.value), None)
    if ready is None:
        return True
    if ready.get("status") != ("True" if verdict.ready else "False"):
        return True
    if ready.get("reason") != verdict.reason:
        return True
    return verdict.state is State.STALLED and ready.get("message") != verdict.message


def durable_job_verdict(
    deployment: Mapping[str, Any] | None,
    desired: int,
    missing_secret: str | None,
    pod_cause: Verdict | None = None,
) -> Verdict:
    """A DurableJob's verdict from its worker Deployment (as last written), its Secret and
    what its pods show.

    ``missing_secret`` describes the database Secret when it does not exist (the pods cannot
    start without it, whatever the Deployment says), else ``None``; ``pod_cause`` is what
    keeps a worker pod from running (``ferry_operator.causes``), named at once rather than
    after the Deployment's progress deadline.
    """
    if missing_secret is not None:
        return Verdict(State.STALLED, "SecretNotFound", missing_secret)
    if pod_cause is not None:
        return pod_cause
    if deployment is None:
        return Verdict(State.RECONCILING, "DeploymentCreating", "the worker Deployment is new")
    status = deployment.get("status") or {}
    ready = int(status.get("readyReplicas") or 0)
    updated = int(status.get("updatedReplicas") or 0)
    progress: Mapping[str, Any] = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "Progressing"), {}
    )
    if progress.get("reason") == "ProgressDeadlineExceeded":
        return Verdict(
            State.STALLED,
            "ProgressDeadlineExceeded",
            f"the worker Deployment made no progress within its deadline ({ready}/{desired} "
            "workers ready); fix: read `kubectl describe pods` of the DurableJob for the cause "
            "(image, Secret, probes, quota)",
        )
    generation = int(deployment["metadata"].get("generation") or 0)
    if int(status.get("observedGeneration") or 0) < generation or updated < desired:
        return Verdict(
            State.RECONCILING,
            "RollingOut",
            f"rolling out: {updated}/{desired} workers updated, {ready} ready",
        )
    if ready < desired:
        return Verdict(State.RECONCILING, "WorkersStarting", f"{ready}/{desired} workers ready")
    if desired == 0:
        return Verdict(
            State.READY, "ScaledToZero", "0 workers wanted (spec.replicas, or the autoscaler's)"
        )
    return Verdict(State.READY, "WorkersReady", f"{ready}/{desired} workers ready")


def queue_mismatch(job: str, polled: str, declared: str | None) -> Verdict | None:
    """A DurableJob whose workers poll ``polled`` while the app declares ``job`` on
    ``declared``: its scheduled runs reach it (the task file routes them), the runs the code
    enqueues do not. Ready — the workers run — but announced as a Warning."""
    if declared is None or declared == polled:
        return None
    return Verdict(
        State.READY,
        "QueueMismatch",
        f'the app declares job "{job}" on queue "{declared}", but these workers poll '
        f'"{polled}": ScheduledTask runs reach them, runs the code enqueues without queue= wait '
        f'on "{declared}", where none of them polls; fix: set spec.queue: {declared}, or '
        f'declare the job with queue="{polled}"',
        warning=True,
    )


def scheduler_verdict(
    planned: Verdict, deployment: Mapping[str, Any] | None, pod_cause: Verdict | None
) -> Verdict:
    """A ScheduledTask the plan accepted (``Scheduled``) is Ready only while a scheduler pod
    is: its occurrences fire only if one runs. Otherwise what keeps the scheduler pods from
    running, or that they are starting; next and last fire are kept either way. Any other
    verdict of the plan (a refusal, ``Suspended``) stands as it is."""
    if planned.reason != "Scheduled":
        return planned
    status = (deployment or {}).get("status") or {}
    ready = int(status.get("readyReplicas") or 0)
    wanted = int(((deployment or {}).get("spec") or {}).get("replicas") or 0)
    if ready > 0:
        message = (
            f"the namespace's scheduler runs this task ({ready}/{wanted} scheduler pods ready)"
        )
        return replace(planned, message=message)
    if pod_cause is not None:
        return replace(
            planned, state=pod_cause.state, reason=pod_cause.reason, message=pod_cause.message
        )
    return replace(
        planned,
        state=State.RECONCILING,
        reason="SchedulerStarting",
        message=f"no scheduler pod is ready yet (0/{wanted}): the task fires once one is",
    )


def secret_not_found(namespace: str, ref: DatabaseRef, defaulted: bool) -> str:
    """Why a DurableJob's pods cannot start: its database Secret is missing; names the Secret,
    where the name came from, and the two ways to fix it."""
    source = (
        "the chart's defaultDatabaseSecret, as spec.databaseSecretRef is unset"
        if defaulted
        else "spec.databaseSecretRef"
    )
    return (
        f'Secret "{ref.name}" (from {source}) does not exist in namespace "{namespace}", so '
        f"the pods have no DATABASE_URL; fix: kubectl -n {namespace} create secret generic "
        f"{ref.name} --from-literal={ref.key}=postgresql://USER:PASSWORD@HOST:5432/DB, or set "
        "spec.databaseSecretRef.name to a Secret that exists"
    )
