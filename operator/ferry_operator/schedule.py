"""A namespace's ScheduledTasks → the task set its scheduler runs, and each task's verdict.

Pure: the handler lists the namespace's ScheduledTasks and DurableJobs and hands them here.
A task is refused — ``Ready=False`` with the runtime's own ``X_*`` code and message, and left
out of the scheduler's task file — when the runtime would refuse it (cron, zone), or when an
entry names a DurableJob that does not exist or runs another app than the scheduler does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ferry.errors import FerryError
from ferry.tasks import next_occurrences, occurrences, parse_cron, validate_zone
from ferry_operator.worker import job_name

Body = Mapping[str, Any]

_HOUR_MS = 3_600_000
# lastFire looks back in growing windows, so a minutely cron costs an hour's walk, not a year's.
_LOOKBACK_WINDOWS_MS = (_HOUR_MS, 24 * _HOUR_MS, 32 * 24 * _HOUR_MS, 367 * 24 * _HOUR_MS)


@dataclass(frozen=True)
class Verdict:
    """A resource's Ready condition, and for a task its next and last fire."""

    ready: bool
    reason: str
    message: str
    next_fire: str | None = None
    last_fire: str | None = None


@dataclass
class SchedulerPlan:
    """The namespace's scheduler: the app it runs, the tasks it loads, the tasks that own it."""

    verdicts: dict[str, Verdict] = field(default_factory=dict)
    source: Body | None = None
    tasks: list[dict[str, Any]] = field(default_factory=list)
    owners: list[Body] = field(default_factory=list)

    @property
    def runs(self) -> bool:
        """Whether the namespace needs a scheduler at all (some accepted task is not suspended)."""
        return bool(self.tasks)

    def document(self) -> dict[str, Any]:
        """The task file ``ferry.scheduler_config`` reads (``{"tasks": [...]}``)."""
        return {"tasks": self.tasks}


def app_identity(job: Body) -> tuple[str, str, str, str]:
    """What one scheduler process can serve: one image, one app, one database."""
    spec = job["spec"]
    ref = spec["databaseSecretRef"]
    return (spec["image"], spec["handler"], ref["name"], ref.get("key", "url"))


def plan_scheduler(tasks: Sequence[Body], jobs: Mapping[str, Body], now_ms: int) -> SchedulerPlan:
    """Judge every task (sorted by name, so the plan is stable) and assemble the task set."""
    plan = SchedulerPlan()
    for body in sorted(tasks, key=lambda b: str(b["metadata"]["name"])):
        name = str(body["metadata"]["name"])
        try:
            entries, source = _resolve_entries(body, jobs, plan.source)
            verdict = _schedule_verdict(body, now_ms)
        except FerryError as refused:
            plan.verdicts[name] = Verdict(False, refused.code, _message(refused))
            continue
        plan.verdicts[name] = verdict
        spec = body["spec"]
        if spec.get("suspend", False):
            continue
        plan.source = source
        plan.tasks.append(
            {
                "name": name,
                "cron": spec["cron"],
                "timeZone": spec["timeZone"],
                "catchUp": spec.get("catchUp", "skip"),
                "maxCatchUp": int(spec.get("maxCatchUp", 10)),
                "entries": entries,
            }
        )
        plan.owners.append(body)
    return plan


def _resolve_entries(
    body: Body, jobs: Mapping[str, Body], source: Body | None
) -> tuple[list[Any], Body | None]:
    """Map each entry's DurableJob to the job name the app knows; pin the scheduler's app
    (the first accepted task's first DurableJob)."""
    owner = f'ScheduledTask "{body["metadata"]["name"]}"'
    resolved = []
    for index, entry in enumerate(body["spec"].get("entries", [])):
        job = jobs.get(entry["job"])
        if job is None:
            raise FerryError(
                "X_INVARIANT",
                f'{owner} entry {index} names DurableJob "{entry["job"]}", which does not '
                "exist in this namespace",
                "create the DurableJob, or fix the entry's job name",
            )
        if source is None:
            source = job
        elif app_identity(job) != app_identity(source):
            pinned = source["metadata"]["name"]
            raise FerryError(
                "X_INVARIANT",
                f'{owner} entry {index} fires DurableJob "{entry["job"]}", whose image, app or '
                f'database differs from DurableJob "{pinned}" that this namespace\'s scheduler '
                "runs — one scheduler process loads one app",
                "give the namespace's DurableJobs one image, handler and databaseSecretRef, or "
                "put the other app's tasks in another namespace",
            )
        resolved.append({"job": job_name(job), "input": entry.get("input", {})})
    return resolved, source


def _schedule_verdict(body: Body, now_ms: int) -> Verdict:
    """Validate cron and zone exactly as the runtime does; compute next and last fire."""
    spec = body["spec"]
    owner = f'ScheduledTask "{body["metadata"]["name"]}"'
    parse_cron(spec["cron"], owner=owner)
    zone = validate_zone(spec["timeZone"], owner=owner)
    if spec.get("suspend", False):
        return Verdict(True, "Suspended", "suspended: the scheduler skips its occurrences")
    created_ms = _created_ms(body, now_ms)
    upcoming = next_occurrences(spec["cron"], spec["timeZone"], now_ms, 1)[0]
    last = _last_due(spec["cron"], spec["timeZone"], created_ms, now_ms)
    return Verdict(
        True,
        "Scheduled",
        "the namespace's scheduler runs this task",
        next_fire=_format(upcoming, zone),
        last_fire=_format(last, zone) if last is not None else None,
    )


def _last_due(cron: str, tz: str, created_ms: int, now_ms: int) -> int | None:
    """The latest occurrence in ``(created, now]``: the last one due since the task existed."""
    for window in _LOOKBACK_WINDOWS_MS:
        start = max(created_ms, now_ms - window)
        found = occurrences(cron, tz, start, now_ms)
        if found:
            return found[-1]
        if start == created_ms:
            return None
    return None


def _created_ms(body: Body, now_ms: int) -> int:
    stamp = body["metadata"].get("creationTimestamp")
    if not stamp:
        return now_ms
    return int(datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp() * 1000)


def _format(instant_ms: int, zone: Any) -> str:
    """An instant in the task's own zone, to the second (what `kubectl get st` shows)."""
    return datetime.fromtimestamp(instant_ms / 1000, UTC).astimezone(zone).isoformat()


def _message(refused: FerryError) -> str:
    return f"{refused.message}; fix: {refused.fix}" if refused.fix else refused.message
