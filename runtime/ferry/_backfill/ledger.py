"""Backfill checkpoints, one per backfill key, as records of the driver's ``RecordStore``
(space ``backfills``), each saved fenced on the run that saves it."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ferry.drivers.capabilities import RECORDS, need
from ferry.drivers.protocol import JobDriver, JsonValue, RunFence

BACKFILLS = "backfills"


@dataclass(frozen=True, slots=True)
class BackfillCheckpoint:
    """How far one backfill has got: the cursor of its next page and what is done."""

    key: str
    cursor: JsonValue
    """Where the next page starts; ``None`` before the first page."""
    processed: int
    pages: int
    done: bool
    updated_at_ms: int


class BackfillLedger:
    """The checkpoints of ``backfill()`` runs on ``driver``'s records."""

    def __init__(self, driver: JobDriver) -> None:
        self._records = need(driver, RECORDS, by="backfill checkpoints")
        self._clock = driver.clock

    async def load(self, key: str) -> BackfillCheckpoint | None:
        """The last checkpoint saved under ``key``, or None before the first page."""
        saved = await self._records.get(BACKFILLS, key, now_ms=self._clock.now_ms())
        if saved is None:
            return None
        saved.pop("key", None)  # carried over by an upgrade from a store that kept it
        return BackfillCheckpoint(key=key, **saved)

    async def save(self, checkpoint: BackfillCheckpoint, *, job_id: str, worker_id: str) -> bool:
        """Save ``checkpoint`` if ``worker_id`` still holds run ``job_id``; answers whether
        it landed (fenced like a step, so a worker that lost its lease cannot rewind it)."""
        value = asdict(checkpoint)
        del value["key"]
        return await self._records.put(
            BACKFILLS,
            checkpoint.key,
            value,
            now_ms=self._clock.now_ms(),
            fence=RunFence(job_id, worker_id),
        )
