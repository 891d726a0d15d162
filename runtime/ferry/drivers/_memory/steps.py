"""Step records per run in one process, fenced on the worker holding the run."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ferry.drivers.protocol import StepRecord


class MemoryStepStore:
    """The ``StepStore`` of the memory driver; ``holds`` is the driver's lease fence."""

    def __init__(self, holds: Callable[[str, str], bool]) -> None:
        self._holds = holds
        self._records: dict[str, dict[str, StepRecord]] = {}

    async def load(self, job_id: str) -> Mapping[str, StepRecord]:
        return dict(self._records.get(job_id, {}))

    async def record(self, job_id: str, step: StepRecord, *, worker_id: str) -> bool:
        if not self._holds(job_id, worker_id):
            return False
        self._records.setdefault(job_id, {}).setdefault(step.name, step)
        return True

    def for_run(self, job_id: str) -> list[StepRecord]:
        """The run's steps in the order they started."""
        return sorted(self._records.get(job_id, {}).values(), key=lambda s: s.started_at_ms)

    def put(self, job_id: str, steps: Sequence[StepRecord]) -> None:
        """Store the steps a run brought from another store (unfenced: it is not running)."""
        self._records[job_id] = {step.name: step for step in steps}

    def forget(self, job_id: str) -> None:
        """Drop a pruned or moved run's steps."""
        self._records.pop(job_id, None)
