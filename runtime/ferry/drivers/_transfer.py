"""What the drivers' ``RunTransfer`` share: when a run offered to an import is one the
store holds already, and the answer for a run offered twice in one import."""

from __future__ import annotations

from typing import Protocol

from ferry.drivers.protocol import ImportResult, JsonValue, MovedRun


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
