"""Every operator read and action, once: the CLI, the dashboard and the MCP tools call these.

Each read answers a typed value the dashboard renders and a ``to_json`` the CLI's
``--json`` envelope and the MCP tools carry, so the three surfaces cannot drift apart. Each
action answers an ``Action``: the summary line, the JSON data, and the banner key the
dashboard shows. Every refusal is a ``FerryError`` raised from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from ferry._admin.filters import run_filter
from ferry._admin.overview import QueueOverview, queue_overview
from ferry._names import check_name
from ferry._scheduler.status import task_status
from ferry._scheduler.store import SchedulerStore
from ferry.drivers._refusals import run_not_found
from ferry.drivers.capabilities import INTROSPECT, need
from ferry.drivers.protocol import JobDriver, JobIntrospection, RunDetail, RunFilter, RunSummary
from ferry.errors import FerryError
from ferry.tasks._declaration import TaskHandle


def introspection(driver: JobDriver) -> JobIntrospection:
    """The driver's introspection; ``X_DRIVER_CAPABILITY`` on a driver without it."""
    return need(
        driver, INTROSPECT, by="operator reads and actions (ferry jobs, the dashboard, MCP)"
    )


def camel_keys(value: Any) -> Any:
    """``value`` with every dict key in camelCase, the JSON envelope's key style
    (``concurrencyKey``, ``nextMs``) — the same names the spec's examples use."""
    if isinstance(value, dict):
        return {_camel(str(key)): camel_keys(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [camel_keys(item) for item in value]
    return value


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True, slots=True)
class Action:
    """What an operator action did: a summary line, its JSON data, its banner key."""

    summary: str
    data: dict[str, Any]
    notice: str


# -- runs ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunsPage:
    """One page of runs under a filter, newest first."""

    filter: RunFilter
    runs: Sequence[RunSummary]

    @property
    def next_before_id(self) -> str | None:
        """The ``before`` that pages on, when this page is full."""
        return self.runs[-1].id if len(self.runs) == self.filter.limit and self.runs else None

    def to_json(self) -> dict[str, Any]:
        """``{"runs": [...], "nextBeforeId": ...}``: ``ferry jobs ls --json``'s data."""
        runs = [asdict(r) for r in self.runs]
        return camel_keys({"runs": runs, "next_before_id": self.next_before_id})  # type: ignore[no-any-return]


async def list_runs(driver: JobDriver, words: Mapping[str, str | None]) -> RunsPage:
    """One page of runs under the operator's filter words (see ``run_filter``)."""
    wanted = run_filter(words, now_ms=driver.clock.now_ms())
    return RunsPage(wanted, await introspection(driver).list_runs(wanted))


async def show_run(driver: JobDriver, run_id: str) -> RunDetail:
    """Everything known about one run; ``X_RUN_NOT_FOUND`` when no run has the id."""
    run = await introspection(driver).get_run(run_id)
    if run is None:
        raise run_not_found(run_id)
    return run


def run_json(run: RunDetail) -> dict[str, Any]:
    """A run as ``ferry jobs show --json`` carries it: its own fields in camelCase, the
    stored values as stored (an input's ``org_id`` stays ``org_id``), each copied once."""
    bare = replace(
        run, payload=None, result=None, steps=[replace(st, result=None) for st in run.steps]
    )
    data: dict[str, Any] = camel_keys(asdict(bare))
    data["payload"], data["result"] = run.payload, run.result
    for shown, step in zip(data["steps"], run.steps, strict=True):
        shown["result"] = step.result
    return data


async def retry_run(driver: JobDriver, run_id: str) -> Action:
    """Put a dead or cancelled run back to queued with fresh attempts."""
    await introspection(driver).retry_run(run_id)
    return Action(f"run {run_id} is queued again", {"id": run_id, "state": "queued"}, "run-retried")


async def cancel_run(driver: JobDriver, run_id: str) -> Action:
    """Cancel a run; a running one is asked to stop at its worker's next heartbeat."""
    state = await introspection(driver).cancel_run(run_id)
    running = state == "running"
    summary = (
        f"run {run_id} is running: cancel requested; its worker aborts it at its next "
        "heartbeat and settles it cancelled"
        if running
        else f"run {run_id} is cancelled"
    )
    data = {"id": run_id, "state": state, "cancel_requested": running}
    return Action(summary, data, "run-cancel-requested" if running else "run-cancelled")


# -- queues ----------------------------------------------------------------------------


async def queue_stats(driver: JobDriver, window_ms: int) -> list[QueueOverview]:
    """Depth, state counts and throughput per queue over ``window_ms``."""
    return await queue_overview(driver, window_ms=window_ms)


def stats_json(window_ms: int, queues: Sequence[QueueOverview]) -> dict[str, Any]:
    """``ferry jobs stats --json``'s data."""
    return {"window_ms": window_ms, "queues": [q.to_json() for q in queues]}


async def set_queue_paused(driver: JobDriver, queue: str, *, paused: bool) -> Action:
    """Pause (stop claims) or resume one queue (the driver refuses a name that is not one)."""
    if paused:
        await introspection(driver).pause_queue(queue)
        summary = f'queue "{queue}" is paused: its runs stay queued until it is resumed'
    else:
        await introspection(driver).resume_queue(queue)
        summary = f'queue "{queue}" is resumed'
    return Action(
        summary,
        {"queue": queue, "paused": paused},
        "queue-paused" if paused else "queue-resumed",
    )


# -- tasks -----------------------------------------------------------------------------


def find_task(tasks: Sequence[TaskHandle], name: str) -> TaskHandle:
    """The declared task called ``name``; ``X_TASK_UNKNOWN`` naming the ones there are."""
    check_name(name, what="task name")
    for task in tasks:
        if task.name == name:
            return task
    known = ", ".join(sorted(task.name for task in tasks)) or "none"
    raise FerryError(
        "X_TASK_UNKNOWN",
        f'the application declares no task named "{name[:80]}" (it declares: {known})',
        "take the name from `ferry tasks list`, and check --app / FERRY_APP",
    )


async def task_statuses(
    tasks: Sequence[TaskHandle],
    driver: JobDriver,
    *,
    now_ms: int,
    next_count: int | None = None,
) -> list[dict[str, Any]]:
    """``ferry tasks list --json``'s rows (with ``next_count``: ``tasks show``'s): each
    task's declaration, next fire in its own zone, last fire and pause."""
    if next_count is not None and next_count < 1:
        raise FerryError(
            "X_INVARIANT",
            f"a count of {next_count} asks for no occurrences",
            "ask for 1 or more next occurrences (default 5)",
        )
    store = SchedulerStore(driver, by="reading tasks")
    ticks = await store.ticks()
    paused = await store.paused_tasks()
    return [
        task_status(
            task,
            ticks.get(task.name),
            paused=task.name in paused,
            now_ms=now_ms,
            next_count=next_count,
        )
        for task in tasks
    ]


async def set_task_paused(
    tasks: Sequence[TaskHandle], driver: JobDriver, name: str, *, paused: bool, now_ms: int
) -> Action:
    """Pause or resume dispatching one task (the scheduler's pause record)."""
    task = find_task(tasks, name)
    store = SchedulerStore(driver, by=f"tasks {'pause' if paused else 'resume'}")
    if paused:
        await store.pause_task(task.name, now_ms=now_ms)
    else:
        await store.resume_task(task.name)
    state = "paused" if paused else "resumed"
    return Action(
        f"task {task.name} {state}", {"name": task.name, "paused": paused}, f"task-{state}"
    )


async def run_task_now(tasks: Sequence[TaskHandle], name: str) -> Action:
    """Fire a task's entries now through ``task.enqueue()`` (the jobs' plain keys, so a
    run already enqueued is not enqueued twice)."""
    task = find_task(tasks, name)
    fired = await task.enqueue()
    runs = [
        {
            "job": entry["job"],
            "jobId": entry["result"].job_id,
            "deduplicated": entry["result"].deduplicated,
        }
        for entry in fired
    ]
    new = sum(1 for run in runs if not run["deduplicated"])
    return Action(
        f"task {task.name} fired {len(runs)} entr{'y' if len(runs) == 1 else 'ies'} "
        f"({new} new run(s), {len(runs) - new} already enqueued)",
        {"name": task.name, "runs": runs},
        "task-fired",
    )
