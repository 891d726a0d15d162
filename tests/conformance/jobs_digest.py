"""A digest job and a daily task on it for the scheduler catch-up tests."""

from __future__ import annotations

from pydantic import BaseModel

from ferry import job
from ferry.tasks._declaration import CatchUp, TaskHandle


class DigestInput(BaseModel):
    occurrence_ms: int


@job(
    input=DigestInput,
    idempotency_key=lambda i: f"digest:{i.occurrence_ms}",
    name="conformance.digest",
)
async def digest(input: DigestInput) -> None:
    """Queued by the tasks below; the tests read its rows."""


def digest_task(*, catch_up: CatchUp, max_catch_up: int = 10) -> TaskHandle:
    """A daily 03:00 UTC task, built without joining the process's declared tasks."""
    return TaskHandle(
        cron="0 3 * * *",
        tz="UTC",
        enqueue=lambda occurrence_ms: [(digest, {"occurrence_ms": occurrence_ms})],
        catch_up=catch_up,
        max_catch_up=max_catch_up,
        name="nightly",
    )
