"""What the drivers' ``RunTransfer`` share: a reserved SQL row as the ``MovedRun`` a drain
carries (the SQL drivers), when a run offered to an import is one the store holds already
(every driver), and the answer for a run offered twice in one import (the durable ones)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ferry.drivers._columns import Row, from_json_text, job_error_of, progress_of
from ferry.drivers.protocol import ImportResult, JsonValue, MovedRun, StepRecord


def moved_of(row: Row, steps: Sequence[StepRecord]) -> MovedRun:
    """A reserved ``jobs`` row (``id`` and ``payload`` as text, ``moving_from`` its state
    before the reservation) with its steps."""
    return MovedRun(
        id=row["id"],
        name=row["name"],
        queue=row["queue"],
        payload=from_json_text(row["payload"]),
        idempotency_key=row["idempotency_key"],
        state=row["moving_from"],
        attempts=row["attempts"],
        max_attempts=row["max_attempts"],
        priority=row["priority"],
        run_at_ms=row["run_at_ms"],
        tenant=row["tenant"],
        actor=row["actor"],
        concurrency_key=row["concurrency_key"],
        last_error=job_error_of(row["last_error_code"], row["last_error_message"]),
        progress=progress_of(row["progress_current"], row["progress_total"]),
        created_at_ms=row["created_at_ms"],
        finished_at_ms=row["finished_at_ms"],
        steps=tuple(steps),
    )


class Enqueued(Protocol):
    """The fields a run never changes after its enqueue (a ``MovedRun``, a stored run)."""

    @property
    def name(self) -> str: ...
    @property
    def queue(self) -> str: ...
    @property
    def payload(self) -> JsonValue: ...
    @property
    def created_at_ms(self) -> int: ...


def same_run(run: Enqueued, other: Enqueued) -> bool:
    """Equal in every field a run never changes after its enqueue: one run, twice."""
    return (run.name, run.queue, run.payload, run.created_at_ms) == (
        other.name,
        other.queue,
        other.payload,
        other.created_at_ms,
    )


def answer_for(first_answer: ImportResult, first: MovedRun, run: MovedRun) -> ImportResult:
    """The answer for ``run``: its key's, or — offered again in the same call — ``present``
    for the same run as the first offer and ``collision`` for a different one."""
    if run is first or first_answer.outcome == "collision":
        return first_answer
    return ImportResult("present" if same_run(run, first) else "collision", first_answer.job_id)
