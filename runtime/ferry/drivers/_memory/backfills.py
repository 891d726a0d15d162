"""Backfill checkpoints in one process, fenced on the run's holder."""

from __future__ import annotations

from collections.abc import Callable

from ferry.drivers.protocol import BackfillCheckpoint


class MemoryBackfillLedger:
    """The ``BackfillLedger`` of the memory driver; ``holds`` is the driver's lease fence."""

    def __init__(self, holds: Callable[[str, str], bool]) -> None:
        self._holds = holds
        self._checkpoints: dict[str, BackfillCheckpoint] = {}

    async def load(self, key: str) -> BackfillCheckpoint | None:
        return self._checkpoints.get(key)

    async def save(self, checkpoint: BackfillCheckpoint, *, job_id: str, worker_id: str) -> bool:
        if not self._holds(job_id, worker_id):
            return False
        self._checkpoints[checkpoint.key] = checkpoint
        return True
