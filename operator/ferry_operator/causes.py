"""Why a Deployment's pods do not run, read off the pods themselves.

A Deployment's own status says only "0/2 ready" until its progress deadline (ten minutes)
passes, and then nothing more specific. The kubelet and the scheduler say the cause on the
pods at once: an image that cannot be pulled (the container waits in ``ErrImagePull`` /
``ImagePullBackOff``), a container the kubelet cannot create (``CreateContainerConfigError``:
a missing Secret key), a process that keeps exiting (its last termination, whose message is
what the role wrote to ``/dev/termination-log`` — ferry's ``X_*`` refusal), a pod no node can
take (``PodScheduled=False``, ``Unschedulable``). Pure: the reconcile lists the owned pods
and hands them here.

Messages are built from what stays the same while the cause lasts (the image, the kubelet's
error, the termination message) — never restart counts or pod names, which change on every
restart and would post a new Warning event each time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ferry_operator.conditions import State, Verdict

Pod = Mapping[str, Any]

IMAGE_PULL_REASONS = frozenset(
    {
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "ErrImageNeverPull",
        "RegistryUnavailable",
        "SignatureValidationFailed",
    }
)
CONFIG_REASONS = frozenset({"CreateContainerConfigError", "CreateContainerError"})
_BACKOFF_PREFIX = "Back-off pulling image"


@dataclass(frozen=True)
class Role:
    """Whose pods these are: how messages name them, the crash-loop reason, and where the
    fields a fix names live."""

    noun: str
    crash_reason: str
    spec: str


WORKERS = Role("worker pods", "WorkersCrashLooping", "spec")
SCHEDULER = Role("scheduler pods", "SchedulerCrashLooping", "the DurableJob's spec")
"""The scheduler runs the image, app and database of a DurableJob its tasks fire."""


def pod_cause(pods: Sequence[Pod], role: Role) -> Verdict | None:
    """The first cause, in the order a person fixes them (image, container config, crash
    loop, scheduling), that keeps any of ``pods`` from running; ``None`` when none shows."""
    live = sorted(
        (pod for pod in pods if not pod["metadata"].get("deletionTimestamp")),
        key=lambda pod: str(pod["metadata"].get("name", "")),
    )
    for check in (_image_pull, _container_config, _crash_loop, _unschedulable):
        for pod in live:
            verdict = check(pod, role)
            if verdict is not None:
                return verdict
    return None


def _containers(pod: Pod) -> Iterator[Mapping[str, Any]]:
    status = pod.get("status") or {}
    yield from status.get("initContainerStatuses") or []
    yield from status.get("containerStatuses") or []


def _image_pull(pod: Pod, role: Role) -> Verdict | None:
    for container in _containers(pod):
        waiting = (container.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") not in IMAGE_PULL_REASONS:
            continue
        image = str(container.get("image", ""))
        said = _pull_error(str(waiting.get("message") or ""), image)
        detail = f": {said}" if said else f" ({waiting['reason']})"
        return Verdict(
            State.STALLED,
            "ImagePullFailed",
            f'the {role.noun} cannot pull image "{image}"{detail}; fix: set {role.spec}.image to '
            f"an image the nodes can pull, and {role.spec}.pod.imagePullSecrets if its registry "
            "needs a login",
        )
    return None


def _pull_error(message: str, image: str) -> str:
    """The kubelet's pull error without the back-off preamble, so ``ErrImagePull`` and the
    ``ImagePullBackOff`` that follows it read the same."""
    text = message.strip()
    if text.startswith(_BACKOFF_PREFIX):
        text = text[len(_BACKOFF_PREFIX) :].strip()
        quoted = f'"{image}"'
        if text.startswith(quoted):
            text = text[len(quoted) :]
        text = text.lstrip(": ").strip()
    if text.startswith("ErrImagePull:"):
        text = text[len("ErrImagePull:") :].strip()
    return text


def _container_config(pod: Pod, role: Role) -> Verdict | None:
    for container in _containers(pod):
        waiting = (container.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") not in CONFIG_REASONS:
            continue
        said = str(waiting.get("message") or waiting["reason"]).strip()
        return Verdict(
            State.STALLED,
            "ContainerConfigError",
            f"the kubelet cannot create the {role.noun}' container: {said}; fix: check "
            f"{role.spec}.databaseSecretRef (the Secret and its key) and {role.spec}.env",
        )
    return None


def _crash_loop(pod: Pod, role: Role) -> Verdict | None:
    for container in _containers(pod):
        if container.get("ready"):
            continue
        state = container.get("state") or {}
        waiting = state.get("waiting") or {}
        ended: Mapping[str, Any] = (
            state.get("terminated") or (container.get("lastState") or {}).get("terminated") or {}
        )
        failed = int(ended.get("exitCode") or 0) != 0
        # Between two restarts the container runs (not yet ready) with its last failure in
        # lastState: still the same crash loop, not a pod "starting".
        if not (failed or waiting.get("reason") == "CrashLoopBackOff"):
            continue
        return Verdict(
            State.STALLED,
            role.crash_reason,
            f"the {role.noun} keep exiting: {_termination(ended)}; fix: what the message "
            "says, and `kubectl logs --previous` of one of them for the rest",
        )
    return None


def _termination(ended: Mapping[str, Any]) -> str:
    """What the last exit said: the termination message (a ferry role writes its ``X_*``
    refusal there), else the runtime's reason and the exit code."""
    message = " ".join(str(ended.get("message") or "").split())
    code = ended.get("exitCode")
    exited = f"exit code {code}" if code is not None else "no exit code"
    if message:
        return f"{message} ({exited})"
    return f"{ended.get('reason') or 'exited'} ({exited})"


def _unschedulable(pod: Pod, role: Role) -> Verdict | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if (
            condition.get("type") == "PodScheduled"
            and condition.get("status") == "False"
            and condition.get("reason") == "Unschedulable"
        ):
            said = " ".join(str(condition.get("message") or "no node fits").split())
            return Verdict(
                State.STALLED,
                "Unschedulable",
                f"no node can take the {role.noun}: {said}; fix: lower "
                f"{role.spec}.resources.requests, or change {role.spec}.pod.nodeSelector, "
                "tolerations or affinity (or add nodes)",
            )
    return None
