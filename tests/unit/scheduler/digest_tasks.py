"""A digest job and tasks built on it, for the scheduler's unit tests."""

from __future__ import annotations

from pydantic import BaseModel

from ferry import job
from ferry.tasks._declaration import CatchUp, TaskHandle


class DigestInput(BaseModel):
    occurrence_ms: int


@job(input=DigestInput, idempotency_key=lambda i: f"digest:{i.occurrence_ms}", name="send_digest")
async def send_digest(input: DigestInput) -> None:
    """The work a digest task enqueues; the tests assert on its rows, not on its body."""


def digest_task(
    cron: str = "0 3 * * *",
    tz: str = "UTC",
    *,
    catch_up: CatchUp = "skip",
    max_catch_up: int = 10,
    name: str = "nightly_digest",
) -> TaskHandle:
    """A task firing ``send_digest`` per occurrence, built without joining the process's
    declared tasks, so no other test's harness fires it."""
    return TaskHandle(
        cron=cron,
        tz=tz,
        enqueue=lambda occurrence_ms: [(send_digest, {"occurrence_ms": occurrence_ms})],
        catch_up=catch_up,
        max_catch_up=max_catch_up,
        name=name,
    )
