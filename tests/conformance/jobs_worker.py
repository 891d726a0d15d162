"""Jobs the worker conformance tests run on a started worker."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from ferry import JobContext, Retry, Step, job

from .jobs_fixture import record, settled


class Work(BaseModel):
    id: str


@job(
    input=Work,
    idempotency_key=lambda i: f"backoff:{i.id}",
    retry=Retry(attempts=3, backoff="fixed", base="200ms"),
    name="conformance.quick-retry",
)
async def quick_retry(input: Work, attempt: int) -> None:
    """Fails its first attempt; the retry is due 200 ms later."""
    record(f"quick-retry:{attempt}")
    if attempt == 1:
        raise RuntimeError("first attempt fails")


@job(input=Work, idempotency_key=lambda i: f"noop:{i.id}", name="conformance.noop")
async def noop(input: Work) -> None:
    record("noop")


held: dict[str, asyncio.Event] = {}
"""Gates the ``held_open`` bodies wait on, by run input id (set one to let it finish)."""


@job(input=Work, idempotency_key=lambda i: f"held:{i.id}", name="conformance.held-open")
async def held_open(input: Work, ctx: JobContext) -> None:
    """Runs until its gate opens or its signal aborts (then stops, as a body should)."""
    record("held-open:started")
    gate = held.setdefault(input.id, asyncio.Event())
    aborted = asyncio.ensure_future(ctx.signal.wait())
    opened = asyncio.ensure_future(gate.wait())
    await asyncio.wait({aborted, opened}, return_when=asyncio.FIRST_COMPLETED)
    aborted.cancel()
    opened.cancel()
    if ctx.signal.reason is not None:
        record(f"held-open:aborted:{ctx.signal.reason.code}")
        raise ctx.signal.reason


@job(
    input=Work,
    idempotency_key=lambda i: f"deaf:{i.id}",
    on_settled=settled.append,
    name="conformance.deaf",
)
async def deaf(input: Work) -> str:
    """Works until its gate opens, deaf to its signal (a call nothing interrupts), then
    completes."""
    record("deaf:started")
    await held.setdefault(input.id, asyncio.Event()).wait()
    return "done"


@job(input=Work, idempotency_key=lambda i: f"deaf-step:{i.id}", name="conformance.deaf-step")
async def deaf_step(input: Work, step: Step) -> str:
    """One step that works until its gate opens, deaf to its signal, then records."""

    async def work() -> str:
        record("deaf-step:started")
        await held.setdefault(input.id, asyncio.Event()).wait()
        return "worked"

    return await step.run("work", work)
