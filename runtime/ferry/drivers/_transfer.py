"""What the drivers' ``RunTransfer`` share: the judgement of a key's holder, and the
answer for a run offered twice in one import (a moved run's columns are
``_columns.stored_columns``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from ferry.drivers._columns import Row, from_json_text
from ferry.drivers.protocol import ImportResult, MovedRun


def judged(holder: Row, run: MovedRun) -> ImportResult:
    """The answer for ``run`` whose key ``holder`` (``id``, ``state``, ``name``, ``queue``,
    ``payload`` as JSON text, ``created_at_ms``) already holds: ``present`` when it is
    ``run`` itself — equal in every field a run never changes after its enqueue, and not
    ``moving`` off this store (then the two "stores" are one, or it is mid-drain
    elsewhere) — else ``collision``."""
    same = holder["state"] != "moving" and (
        holder["name"],
        holder["queue"],
        from_json_text(holder["payload"]),
        holder["created_at_ms"],
    ) == (run.name, run.queue, run.payload, run.created_at_ms)
    return ImportResult("present" if same else "collision", str(holder["id"]))


def answer_for(first_answer: ImportResult, first: MovedRun, run: MovedRun) -> ImportResult:
    """The answer for ``run``: its key's, or — offered again in the same call — ``present``
    for the same run as the first offer (equal in every field a run never changes after its
    enqueue) and ``collision`` for a different one."""
    if run is first or first_answer.outcome == "collision":
        return first_answer
    same = (run.name, run.queue, run.payload, run.created_at_ms) == (
        first.name,
        first.queue,
        first.payload,
        first.created_at_ms,
    )
    return ImportResult("present" if same else "collision", first_answer.job_id)


async def imported(
    runs: Sequence[MovedRun],
    write: Callable[[list[MovedRun]], Awaitable[Mapping[str, ImportResult]]],
) -> list[ImportResult]:
    """``import_runs``: ``write`` imports the first run offered of each key and answers
    each key's result; a run offered again in the same call is answered by ``answer_for``."""
    firsts: dict[str, MovedRun] = {}
    for run in runs:
        firsts.setdefault(run.idempotency_key, run)
    found = await write(list(firsts.values())) if firsts else {}
    return [
        answer_for(found[run.idempotency_key], firsts[run.idempotency_key], run) for run in runs
    ]
