"""What the drivers' ``RunTransfer`` share: the answer for a run offered twice in one
import."""

from __future__ import annotations

from ferry.drivers.protocol import ImportResult, MovedRun


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
