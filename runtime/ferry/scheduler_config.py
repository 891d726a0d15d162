"""Scheduled tasks from a file: how the Kubernetes scheduler learns its namespace's tasks.

The operator renders a namespace's ScheduledTasks into a ConfigMap mounted into the scheduler
pods; this module turns that document into ``task(...)`` handles, resolving job names
through the app's ``Api``. The document is ``{"tasks": [{name, cron, timeZone, catchUp,
maxCatchUp, suspend, entries: [{job, queue, input}]}]}``.

An entry's ``queue`` is its DurableJob's ``spec.queue``, the one queue that DurableJob's
workers poll: the entry enqueues there, whatever queue the code declares the job on, so a
scheduled run never waits on a queue no worker listens to. Without ``queue`` the declared
one is used.

The scheduler Deployment points ``FERRY_APP`` at this module's ``api``: the app named by
``FERRY_TASKS_APP`` with its tasks replaced by the file's, so the scheduler role runs
unchanged. A changed file reaches the process by a rollout the operator triggers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ferry._app import Api, load_app
from ferry._jobs.declaration import JobHandle
from ferry.errors import FerryError
from ferry.tasks._declaration import Entry, TaskHandle, task


def tasks_from_document(document: Mapping[str, Any], api: Api) -> list[TaskHandle]:
    """One task handle per unsuspended task in ``document``; jobs are looked up in ``api``."""
    specs = document.get("tasks")
    if not isinstance(specs, list):
        raise FerryError(
            "X_INVARIANT",
            f"the task file holds {type(specs).__name__} under 'tasks', not a list",
            'write {"tasks": [{"name": ..., "cron": ..., "timeZone": ..., "entries": [...]}]}',
        )
    return [_task(spec, api) for spec in specs if not spec.get("suspend", False)]


def tasks_from_file(path: str | Path, api: Api) -> list[TaskHandle]:
    """``tasks_from_document`` over a JSON file."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as unreadable:
        raise FerryError(
            "X_INVARIANT",
            f"the task file {str(path)!r} could not be read as JSON ({unreadable})",
            "mount the operator's ferry-scheduler-tasks ConfigMap there, or fix FERRY_TASKS_FILE",
        ) from None
    return tasks_from_document(document, api)


def _task(spec: Mapping[str, Any], api: Api) -> TaskHandle:
    name = str(spec["name"])
    entries = [_entry(name, index, entry, api) for index, entry in enumerate(spec["entries"])]
    return task(
        cron=spec["cron"],
        tz=spec["timeZone"],
        enqueue=lambda _occurrence_ms: entries,
        catch_up=spec.get("catchUp", "skip"),
        max_catch_up=int(spec.get("maxCatchUp", 10)),
        name=name,
    )


def _entry(task_name: str, index: int, entry: Mapping[str, Any], api: Api) -> Entry:
    job: JobHandle[Any, Any] | None = api.jobs.get(str(entry["job"]))
    if job is None:
        known = ", ".join(sorted(api.jobs)) or "none"
        raise FerryError(
            "X_JOB_UNKNOWN",
            f'task "{task_name}" entry {index} names job "{entry["job"]}", which the app does '
            f"not declare (it declares: {known})",
            "set the DurableJob's spec.job to the job's name in the app, or hand the job's "
            "module to define_api(jobs=[...])",
        )
    queue = entry.get("queue")
    routed = job if queue is None else JobHandle(job.definition, job.actor, queue=str(queue))
    return (routed, entry.get("input", {}))


def __getattr__(attribute: str) -> Api:
    """``ferry.scheduler_config:api`` — the app of ``FERRY_TASKS_APP`` with the file's tasks."""
    if attribute != "api":
        raise AttributeError(attribute)
    app = load_app(_required_env("FERRY_TASKS_APP"))
    tasks: Sequence[TaskHandle] = tasks_from_file(_required_env("FERRY_TASKS_FILE"), app)
    return Api(jobs=dict(app.jobs), tasks={handle.name: handle for handle in tasks})


def _required_env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise FerryError(
            "X_INVARIANT",
            f"FERRY_APP names ferry.scheduler_config:api but {name} is not set",
            "set FERRY_TASKS_APP to the app (module:api) and FERRY_TASKS_FILE to the task file",
        )
    return value
