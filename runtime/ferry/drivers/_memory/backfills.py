"""``BackfillLedger`` in memory: checkpoints by key, fenced on the run's holder."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ferry.drivers.protocol import BackfillCheckpoint

if TYPE_CHECKING:
    from ferry.drivers._memory.driver import MemoryJobDriver


class MemoryBackfillLedger:
    """Backfill checkpoints in this process."""

    def __init__(self, driver: MemoryJobDriver) -> None:
        self._driver = driver
        self._checkpoints: dict[str, BackfillCheckpoint] = {}

    async def load(self, key: str) -> BackfillCheckpoint | None:
        return self._checkpoints.get(key)

    async def save(self, checkpoint: BackfillCheckpoint, *, job_id: str, worker_id: str) -> bool:
        if self._driver._held(job_id, worker_id) is None:
            return False
        self._checkpoints[checkpoint.key] = checkpoint
        return True
