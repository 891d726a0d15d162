"""Enqueue a run of a declared job by name: ``ferry jobs enqueue``.

The run goes through the job's own handle (``JobHandle.enqueue``), the one enqueue
implementation, so its input is validated against the job's model, its key and its rate
key derived as in the application, and a key already held dedupes here too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ferry._duration import Duration
from ferry._jobs.declaration import JobHandle
from ferry._names import check_name
from ferry._operations.envelope import Action
from ferry.errors import FerryError


def find_job(jobs: Mapping[str, JobHandle[Any, Any]], name: str) -> JobHandle[Any, Any]:
    """The declared job called ``name``; ``X_JOB_UNKNOWN`` naming the ones there are."""
    check_name(name, what="job name")
    if name in jobs:
        return jobs[name]
    known = ", ".join(sorted(jobs)) or "none"
    raise FerryError(
        "X_JOB_UNKNOWN",
        f'the application declares no job named "{name[:80]}" (it declares: {known})',
        "take the name from the application's define_api(jobs=...), and check --app / FERRY_APP",
    )


def input_of(text: str) -> Any:
    """The ``--input`` JSON text as a value; ``X_VALIDATION`` when it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise FerryError(
            "X_VALIDATION",
            f"--input is not JSON: {error.msg} at character {error.pos}",
            """pass the job's input as a JSON object, e.g. --input '{"account_id": "a1"}'""",
        ) from None


async def enqueue_job(
    jobs: Mapping[str, JobHandle[Any, Any]],
    name: str,
    input: Any,
    *,
    delay: Duration | None = None,
    priority: int | None = None,
    queue: str | None = None,
) -> Action:
    """Queue one run of job ``name`` through the ambient driver."""
    handle = find_job(jobs, name)
    result = await handle.enqueue(input, delay=delay, priority=priority, queue=queue)
    verb = "already held by" if result.deduplicated else "enqueued as"
    return Action(
        f'job "{handle.name}": {verb} run {result.job_id}',
        {"job": handle.name, "jobId": result.job_id, "deduplicated": result.deduplicated},
        "run-deduplicated" if result.deduplicated else "run-enqueued",
    )
