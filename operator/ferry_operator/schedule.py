"""A namespace's ScheduledTasks → the task set its scheduler runs, and each task's verdict.

Pure: the handler lists the namespace's ScheduledTasks and DurableJobs and hands them here.
A task is checked in the order a person would fix it: its own cron and zone first (exactly as
the runtime judges them, ``InvalidCron``/``InvalidTimeZone``), then what it refers to — each
entry's DurableJob must exist (``JobNotFound``) and run the app the namespace's scheduler runs
(``AppMismatch``). A refused task is ``Stalled`` with the runtime's ``X_*`` code and message and
a fix in the resource's own YAML terms, and is left out of the scheduler's task file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ferry.errors import FerryError
from ferry.tasks import next_occurrences, occurrences, parse_cron, validate_zone
from ferry_operator.autoscale import policy_of
from ferry_operator.conditions import State, Verdict, stalled
from ferry_operator.worker import job_name, job_queue

Body = Mapping[str, Any]

_HOUR_MS = 3_600_000
# lastFire looks back in growing windows, so a minutely cron costs an hour's walk, not a year's.
_LOOKBACK_WINDOWS_MS = (_HOUR_MS, 24 * _HOUR_MS, 32 * 24 * _HOUR_MS, 367 * 24 * _HOUR_MS)
# The runtime's zone fix carries its best guess as tz="America/Bogota"; the operator says it in
# the resource's own terms.
_ZONE_EXAMPLE = re.compile(r'tz="([^"]+)"')


class _Refused(Exception):
    """A task refused: carries its ``Stalled`` verdict out of the checks."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.message)
        self.verdict = verdict


@dataclass
class SchedulerPlan:
    """The namespace's scheduler: the app it runs, the tasks it loads, the tasks that own it,
    and the autoscaled DurableJobs whose queues its leader measures."""

    verdicts: dict[str, Verdict] = field(default_factory=dict)
    source: Body | None = None
    tasks: list[dict[str, Any]] = field(default_factory=list)
    owners: list[Body] = field(default_factory=list)
    measured: list[Body] = field(default_factory=list)
    """Autoscaled DurableJobs on the scheduler's database: it measures their queues."""
    unmeasurable: dict[str, Verdict] = field(default_factory=dict)
    """Autoscaled DurableJobs on another database, by name: nothing measures their queues."""

    @property
    def runs(self) -> bool:
        """Whether the namespace needs a scheduler at all: some accepted task is not
        suspended, or some DurableJob scales on a backlog only the scheduler measures."""
        return bool(self.tasks or self.measured)

    def document(self) -> dict[str, Any]:
        """The task file ``ferry.scheduler_config`` reads (``{"tasks": [...]}``)."""
        return {"tasks": self.tasks}

    def stall(self, verdict: Verdict) -> None:
        """Every accepted task gets ``verdict``: their scheduler cannot run."""
        for owner in self.owners:
            self.verdicts[str(owner["metadata"]["name"])] = verdict


def app_identity(job: Body) -> tuple[str, str, str, str]:
    """What one scheduler process can serve: one image, one app, one database."""
    spec = job["spec"]
    return (spec["image"], spec["handler"], *database_identity(job))


def database_identity(job: Body) -> tuple[str, str]:
    """The database a DurableJob's queue lives in, as the Secret key naming it: what one
    scheduler can measure."""
    ref = job["spec"]["databaseSecretRef"]
    return (ref["name"], ref.get("key", "url"))


def plan_scheduler(
    tasks: Sequence[Body],
    jobs: Mapping[str, Body],
    now_ms: int,
    missing_secrets: Mapping[str, str] | None = None,
) -> SchedulerPlan:
    """Judge every task (sorted by name, so the plan is stable) and assemble the task set.

    ``jobs`` are the namespace's DurableJobs by name, their database Secret already resolved;
    ``missing_secrets`` maps the name of each DurableJob whose Secret does not exist to why. A
    task whose scheduler would run on such a job stays in the task file (the pods start once
    the Secret exists) but is ``Stalled`` with ``SecretNotFound`` until then.
    """
    plan = SchedulerPlan()
    for body in sorted(tasks, key=lambda b: str(b["metadata"]["name"])):
        name = str(body["metadata"]["name"])
        try:
            verdict = _schedule_verdict(body, now_ms)
            entries, source = _resolve_entries(body, jobs, plan.source)
        except _Refused as refused:
            plan.verdicts[name] = refused.verdict
            continue
        spec = body["spec"]
        if spec.get("suspend", False):
            plan.verdicts[name] = verdict
            continue
        plan.source = source
        missing = (missing_secrets or {}).get(str(source["metadata"]["name"]))
        plan.verdicts[name] = (
            verdict if missing is None else Verdict(State.STALLED, "SecretNotFound", missing)
        )
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
    _plan_measuring(plan, jobs)
    return plan


def _plan_measuring(plan: SchedulerPlan, jobs: Mapping[str, Body]) -> None:
    """Give every autoscaled DurableJob a measuring scheduler: the tasks' one when there is
    one (the first autoscaled DurableJob's app otherwise). One scheduler reads one database,
    so a DurableJob on another one cannot be measured and says so."""
    for name, job in sorted(jobs.items()):
        if policy_of(job["spec"]) is None:
            continue
        if plan.source is None:
            plan.source = job
        if database_identity(job) == database_identity(plan.source):
            plan.measured.append(job)
            continue
        pinned = plan.source["metadata"]["name"]
        secret, key = database_identity(plan.source)
        refused = FerryError(
            "X_INVARIANT",
            f"DurableJob \"{name}\" autoscales on its queue's backlog, which this namespace's "
            f'scheduler measures in the database of DurableJob "{pinned}" (Secret "{secret}", '
            f'key "{key}"), not in its own',
            f"give it the databaseSecretRef of DurableJob {pinned!r}, or move it to a namespace "
            "of its own database, or drop spec.autoscaling and set spec.replicas",
        )
        plan.unmeasurable[name] = stalled("BacklogUnmeasurable", refused)


def _resolve_entries(
    body: Body, jobs: Mapping[str, Body], source: Body | None
) -> tuple[list[Any], Body]:
    """Map each entry's DurableJob to the job name the app knows and the queue its workers
    poll; pin the scheduler's app (the first accepted task's first DurableJob)."""
    owner = f'ScheduledTask "{body["metadata"]["name"]}"'
    resolved = []
    for index, entry in enumerate(body["spec"].get("entries", [])):
        job = jobs.get(entry["job"])
        if job is None:
            refused = FerryError(
                "X_INVARIANT",
                f'{owner} entry {index} names DurableJob "{entry["job"]}", which does not '
                "exist in this namespace",
                f"create the DurableJob, or set spec.entries[{index}].job to one of: "
                f"{', '.join(sorted(jobs)) or '(none yet)'}",
            )
            raise _Refused(stalled("JobNotFound", refused))
        if source is None:
            source = job
        elif app_identity(job) != app_identity(source):
            pinned = source["metadata"]["name"]
            refused = FerryError(
                "X_INVARIANT",
                f'{owner} entry {index} fires DurableJob "{entry["job"]}", whose image, app or '
                f'database differs from DurableJob "{pinned}" that this namespace\'s scheduler '
                "runs — one scheduler process loads one app",
                "give the namespace's DurableJobs one spec.image, spec.handler and "
                "spec.databaseSecretRef, or put the other app's tasks in another namespace",
            )
            raise _Refused(stalled("AppMismatch", refused))
        # The DurableJob's queue travels with the entry: its workers poll that queue only.
        resolved.append(
            {"job": job_name(job), "queue": job_queue(job), "input": entry.get("input", {})}
        )
    if source is None:
        # The CRD requires one entry at least; a body from elsewhere gets the same answer.
        refused = FerryError(
            "X_INVARIANT", f"{owner} has no entries", "list the jobs it fires in spec.entries"
        )
        raise _Refused(stalled("NoEntries", refused))
    return resolved, source


def _schedule_verdict(body: Body, now_ms: int) -> Verdict:
    """Validate cron and zone exactly as the runtime does; compute next and last fire."""
    spec = body["spec"]
    owner = f'ScheduledTask "{body["metadata"]["name"]}"'
    try:
        parse_cron(spec["cron"], owner=owner)
    except FerryError as refused:
        raise _Refused(stalled("InvalidCron", refused, f"in spec.cron, {refused.fix}")) from None
    try:
        zone = validate_zone(spec["timeZone"], owner=owner)
    except FerryError as refused:
        example = _ZONE_EXAMPLE.search(refused.fix)
        fix = (
            "set spec.timeZone to an IANA zone id, e.g. "
            f"spec.timeZone: {example[1] if example else 'Europe/Berlin'}"
        )
        raise _Refused(stalled("InvalidTimeZone", refused, fix)) from None
    if spec.get("suspend", False):
        return Verdict(State.READY, "Suspended", "suspended: the scheduler skips its occurrences")
    created_ms = _created_ms(body, now_ms)
    upcoming = next_occurrences(spec["cron"], spec["timeZone"], now_ms, 1)[0]
    last = _last_due(spec["cron"], spec["timeZone"], created_ms, now_ms)
    return Verdict(
        State.READY,
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
