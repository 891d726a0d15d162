"""Scheduled tasks as operators see and steer them: status, pause, resume, run now.

``task_status`` is what ``ferry tasks list/show`` report per task: the declaration plus
derived state. Every instant is rendered in the task's own zone with that zone's offset at
the instant (``2026-03-09T03:00:00-04:00``; ``Z`` where the offset is zero), never a
machine-local one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from ferry._bounds import bounded_int
from ferry._names import check_name
from ferry._operations.envelope import Action, iso_instant
from ferry._scheduler.store import SchedulerStore, TaskTick
from ferry.drivers.protocol import JobDriver
from ferry.errors import FerryError
from ferry.tasks._declaration import MAX_OCCURRENCES, TaskHandle


def task_status(
    task: TaskHandle,
    tick: TaskTick | None,
    *,
    paused: bool,
    now_ms: int,
    next_count: int | None = None,
) -> dict[str, Any]:
    """The descriptor, ``next``/``nextMs``, ``last``/``lastMs``/``lastFiredAtMs`` (null
    before the first fire) and ``paused``; with ``next_count``, also ``describe`` and
    ``nextOccurrences`` (what ``tasks show`` adds)."""
    upcoming = task.next_occurrences(max(next_count or 0, 1), after_ms=now_ms)
    last_ms = tick.last_occurrence_ms if tick is not None else None
    status: dict[str, Any] = {
        **task.describe(),
        "nextMs": upcoming[0],
        "next": render_instant(upcoming[0], task.zone),
        "lastMs": last_ms,
        "last": render_instant(last_ms, task.zone) if last_ms is not None else None,
        "lastFiredAtMs": tick.last_fired_at_ms if tick is not None else None,
        "lastFiredAt": iso_instant(tick.last_fired_at_ms) if tick is not None else None,
        "paused": paused,
    }
    if next_count is not None:
        status["describe"] = task.describe_schedule()
        status["nextOccurrences"] = [
            {"ms": instant, "at": render_instant(instant, task.zone)}
            for instant in upcoming[:next_count]
        ]
    return status


def render_instant(instant_ms: int, zone: ZoneInfo) -> str:
    """An instant as ISO 8601 wall time in ``zone`` with its offset (``Z`` for zero)."""
    text = datetime.fromtimestamp(instant_ms / 1000, zone).isoformat(timespec="seconds")
    return text.removesuffix("+00:00") + "Z" if text.endswith("+00:00") else text


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
    if next_count is not None:
        bounded_int(
            next_count,
            field="count",
            low=1,
            high=MAX_OCCURRENCES,
            fix=f"ask for 1 to {MAX_OCCURRENCES} next occurrences (default 5)",
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
