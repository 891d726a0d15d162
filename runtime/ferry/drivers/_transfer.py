"""What the drivers' ``RunTransfer`` share: a moved run as the columns it stores, the
judgement of a key's holder, and the answer for a run offered twice in one import."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ferry.drivers._columns import Row, from_json_text, json_text
from ferry.drivers.protocol import ImportResult, MovedRun


def moved_columns(run: MovedRun) -> dict[str, Any]:
    """A moved run as the columns an import writes, by name, in the order every driver's
    import takes them (SQL: a JSON object per run; Redis: ARGV), its payload as JSON text.
    The one mapping of a moved run to its stored row (its steps travel beside it)."""
    error, progress = run.last_error, run.progress
    return {
        "name": run.name,
        "queue": run.queue,
        "payload": json_text(run.payload),
        "idempotency_key": run.idempotency_key,
        "state": run.state,
        "attempts": run.attempts,
        "max_attempts": run.max_attempts,
        "priority": run.priority,
        "run_at_ms": run.run_at_ms,
        "tenant": run.tenant,
        "actor": run.actor,
        "concurrency_key": run.concurrency_key,
        "last_error_code": error.code if error is not None else None,
        "last_error_message": error.message if error is not None else None,
        "progress_current": progress.current if progress is not None else None,
        "progress_total": progress.total if progress is not None else None,
        "created_at_ms": run.created_at_ms,
        "finished_at_ms": run.finished_at_ms,
    }


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
