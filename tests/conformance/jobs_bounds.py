"""Jobs whose bodies hand ferry numbers and names from their input: what the boundary
tests drive past the bounds."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ferry import Retry, job


class Sleep(BaseModel):
    id: str
    seconds: float = 1.0
    step: str = "nap"


class Report(BaseModel):
    id: str
    current: Any = 1
    total: Any = 1


@job(
    input=Sleep,
    idempotency_key=lambda i: f"sleeper:{i.id}",
    retry=Retry(attempts=1),
    name="conformance.sleeper",
)
async def sleeper(input: Sleep, step: Any) -> None:
    # A payload cannot carry a NUL (refused at enqueue); a body can build one: "\\0" is one.
    await step.sleep(input.step.replace("\\0", "\x00"), input.seconds)


@job(
    input=Report,
    idempotency_key=lambda i: f"reporter:{i.id}",
    retry=Retry(attempts=1),
    name="conformance.reporter",
)
async def reporter(input: Report, progress: Any) -> None:
    progress(input.current, input.total)
