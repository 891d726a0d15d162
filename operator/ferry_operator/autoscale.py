"""``spec.autoscaling``: a DurableJob's worker count from its queue's backlog.

Pure: given the policy, the decision stored in ``status.autoscaling`` and one measurement of
the queue, ``decide`` answers the next decision. The autoscale loop writes it to the
status; the reconcile applies its ``replicas`` to the worker Deployment and posts the
``Scaled`` event with its message — so the decision survives an operator restart or a
leader handover, and the status says why the workers are as many as they are.

The rules (the backlog is ``job_queue_backlog``: runs due now plus runs running):

- **needed** = ``ceil(backlog / targetBacklogPerReplica)``, held within
  ``[minReplicas, maxReplicas]`` — so with ``minReplicas: 0`` the first due run needs one.
- **Up at once**: when more are needed than run, the decision goes straight to needed.
- **A run waiting a whole cooldown** (``job_queue_oldest_age_seconds``) means the pods that
  run do not keep up, whatever the count says: one more, up to ``maxReplicas``.
- **Down damped**: when fewer are needed, the decision waits until the backlog has needed
  fewer for a whole ``cooldown``, then goes to the most it needed during that wait (the
  ``scaleDownTo`` the status carries). A burst that comes back within the cooldown finds
  its workers still there.
- **No measurement, no change**: until the namespace's scheduler leader reports the queue,
  the decision holds (at ``minReplicas`` for a new DurableJob), and says so (``measured``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ferry._duration import to_ms
from ferry_operator.conditions import stamp
from ferry_operator.leader import epoch_ms

DEFAULT_COOLDOWN = "5m"


@dataclass(frozen=True)
class Policy:
    """A DurableJob's ``spec.autoscaling`` with its defaults filled in."""

    min_replicas: int
    max_replicas: int
    target: int
    """Backlog one worker pod is expected to carry (default: ``spec.concurrency``)."""
    cooldown_ms: int

    def clamp(self, replicas: int) -> int:
        """``replicas`` held within ``[min_replicas, max_replicas]``."""
        return max(self.min_replicas, min(self.max_replicas, replicas))


@dataclass(frozen=True)
class QueueSample:
    """One measurement of a queue, as the scheduler leader's ``/metrics`` served it."""

    backlog: int
    oldest_age_s: float


def policy_of(spec: Mapping[str, Any]) -> Policy | None:
    """The autoscaling policy of a DurableJob's spec, or ``None`` without ``autoscaling``."""
    wanted = spec.get("autoscaling")
    if not wanted:
        return None
    minimum = int(wanted.get("minReplicas", 0))
    return Policy(
        min_replicas=minimum,
        max_replicas=max(int(wanted["maxReplicas"]), minimum),
        target=max(int(wanted.get("targetBacklogPerReplica") or spec.get("concurrency", 10)), 1),
        cooldown_ms=to_ms(wanted.get("cooldown", DEFAULT_COOLDOWN), what="autoscaling.cooldown"),
    )


def desired_replicas(body: Mapping[str, Any]) -> int:
    """The worker Deployment's replicas: the autoscaler's decision when the DurableJob has
    ``autoscaling`` (``minReplicas`` before its first), else ``spec.replicas``."""
    spec = body["spec"]
    policy = policy_of(spec)
    if policy is None:
        return int(spec.get("replicas", 1))
    decided = ((body.get("status") or {}).get("autoscaling") or {}).get("replicas")
    return policy.clamp(policy.min_replicas if decided is None else int(decided))


def needed(policy: Policy, backlog: int) -> int:
    """Worker pods ``backlog`` needs, within the policy's bounds."""
    return policy.clamp(math.ceil(max(backlog, 0) / policy.target))


def decide(
    policy: Policy,
    stored: Mapping[str, Any],
    sample: QueueSample | None,
    queue: str,
    now_ms: int,
) -> dict[str, Any]:
    """The next ``status.autoscaling`` from the stored one and a measurement of ``queue``
    (``None``: none yet); equal to ``stored`` when nothing changes, so nothing is written."""
    current = policy.clamp(int(stored.get("replicas", policy.min_replicas)))
    decision: dict[str, Any] = {**stored, "replicas": current, "measured": sample is not None}
    if sample is None:
        if stored.get("measured") is not False:
            decision["message"] = (
                f"holding {current} replicas: the queue's backlog is not measured (no scheduler "
                "leader of the namespace answers on its metrics port)"
            )
        return decision
    wanted = needed(policy, sample.backlog)
    load = _load(policy, sample, queue)
    if sample.oldest_age_s * 1000 >= policy.cooldown_ms and current < policy.max_replicas:
        # A due run unclaimed for a whole cooldown: the pods that run do not keep up, whatever
        # the count says (a target set above what one pod carries), so one more.
        wanted = max(wanted, current + 1)
    if wanted >= current and ("scaleDownSince" in stored or not stored.get("measured")):
        # Measured again, or the backlog needs them all again (the cooldown starts over when
        # it next does not).
        decision.pop("scaleDownSince", None)
        decision.pop("scaleDownTo", None)
        decision["message"] = f"keeping {current} replicas: {load}"
    if wanted > current:
        message = f"scaled up from {current} to {wanted}: {load}"
        return _scaled(decision, wanted, message, now_ms)
    if wanted == current:
        return decision
    since = stored.get("scaleDownSince")
    if since is None:
        decision.update(scaleDownSince=stamp(now_ms), scaleDownTo=wanted)
        decision["message"] = (
            f"holding {current} replicas for the cooldown: {load}, which needs {wanted}"
        )
        return decision
    to = max(int(stored.get("scaleDownTo", wanted)), wanted)
    decision["scaleDownTo"] = to
    if now_ms - epoch_ms(str(since)) < policy.cooldown_ms:
        return decision
    decision.pop("scaleDownSince", None)
    decision.pop("scaleDownTo", None)
    cooled = policy.cooldown_ms // 1000
    message = f"scaled down from {current} to {to} after {cooled}s needing fewer: {load}"
    return _scaled(decision, to, message, now_ms)


def _scaled(decision: dict[str, Any], to: int, message: str, now_ms: int) -> dict[str, Any]:
    decision.update(replicas=to, lastScaleTime=stamp(now_ms), message=message)
    return decision


def _load(policy: Policy, sample: QueueSample, queue: str) -> str:
    """The measurement in words: what a person reads to see why."""
    oldest = (
        f", the oldest due run waiting {sample.oldest_age_s:.0f}s" if sample.oldest_age_s else ""
    )
    return (
        f'queue "{queue}" has a backlog of {sample.backlog} (due + running){oldest}, at '
        f"{policy.target} per replica"
    )
