"""Status blocks the operator writes: ``observedGeneration`` and a ``Ready`` condition."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def ready_condition(
    *, ready: bool, reason: str, message: str, now: str, previous: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The ``Ready`` condition; ``lastTransitionTime`` moves only when the status flips."""
    status = "True" if ready else "False"
    before = next((c for c in previous if c.get("type") == "Ready"), None)
    since = before["lastTransitionTime"] if before and before.get("status") == status else now
    return {
        "type": "Ready",
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": since,
    }


def durable_job_readiness(
    deployment: Mapping[str, Any] | None, replicas: int
) -> tuple[bool, str, str]:
    """Ready, reason and message for a DurableJob from its worker Deployment's status."""
    if deployment is None:
        return False, "Pending", "the worker Deployment is being created"
    ready = int((deployment.get("status") or {}).get("readyReplicas") or 0)
    if ready >= replicas:
        return True, "WorkersReady", f"{ready}/{replicas} workers ready"
    return False, "WorkersStarting", f"{ready}/{replicas} workers ready"
