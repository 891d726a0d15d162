"""The app the scheduler processes run: one every-minute task over a job nobody works.

Only ever imported by the spawned ``ferry scheduler`` / ``ferry tasks`` processes, never by
the test process: a ``* * * * *`` task declared there would be fired by every frozen-clock
harness that advances past a minute.
"""

from __future__ import annotations

from pydantic import BaseModel

from ferry import job, task


class MinuteInput(BaseModel):
    occurrence_ms: int


@job(input=MinuteInput, idempotency_key=lambda i: f"minute:{i.occurrence_ms}")
async def record_minute(input: MinuteInput) -> None:
    """Queued by the task; the tests read its rows, no worker runs it."""


every_minute = task(
    cron="* * * * *",
    tz="UTC",
    catch_up="run-all",
    enqueue=lambda occurrence_ms: [(record_minute, {"occurrence_ms": occurrence_ms})],
)
