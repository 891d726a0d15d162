"""Jobs with durable steps for the execution conformance tests."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from pydantic import BaseModel

from ferry import JobContext, Retry, Step, job, throw_if_aborted

from .jobs_fixture import record


class Onboard(BaseModel):
    org_id: str


class Mail:
    """A mail service that can be told to fail once for a kind of mail."""

    def __init__(self) -> None:
        self.fail_next: set[str] = set()
        self.sent: list[str] = []

    def fail_once(self, kind: str) -> None:
        self.fail_next.add(kind)

    async def send(self, kind: str) -> str:
        if kind in self.fail_next:
            self.fail_next.discard(kind)
            raise ConnectionError(f"{kind}: smtp unavailable")
        self.sent.append(kind)
        return f"{kind}-sent"


mail = Mail()


@job(
    input=Onboard,
    idempotency_key=lambda i: f"onboard:{i.org_id}",
    retry=Retry(attempts=5, backoff="exponential"),
    name="conformance.onboard",
)
async def onboard_org(input: Onboard, step: Step, ctx: JobContext) -> None:
    org = await step.run("provision", lambda: {"org": input.org_id, "plan": "free"})
    await step.run("welcome-email", lambda: mail.send("welcome"))
    await step.sleep("cool-off", "3d")
    await step.run("nudge", lambda: mail.send(f"nudge:{org['plan']}"))


@job(input=Onboard, idempotency_key=lambda i: f"dup:{i.org_id}", name="conformance.dup")
async def duplicate_steps(input: Onboard, step: Step) -> None:
    await step.run("same", lambda: 1)
    await step.run("same", lambda: 2)


@job(input=Onboard, idempotency_key=lambda i: f"opaque:{i.org_id}", name="conformance.opaque")
async def opaque_step(input: Onboard, step: Step) -> None:
    await step.run("bytes", lambda: b"raw")


@job(
    input=Onboard,
    idempotency_key=lambda i: f"cooperative:{i.org_id}",
    timeout="30s",
    retry=Retry(attempts=2),
    name="conformance.cooperative",
)
async def cooperative(input: Onboard, step: Step, ctx: JobContext) -> None:
    await step.run("before", lambda: record("before"))
    record("waiting")  # the step is stored: from here on only the abort moves this body
    await ctx.signal.wait()
    record(f"aborted:{ctx.signal.reason.code if ctx.signal.reason else None}")
    throw_if_aborted(ctx)


@job(
    input=Onboard,
    idempotency_key=lambda i: f"stubborn:{i.org_id}",
    timeout="30s",
    retry=Retry(attempts=1),
    name="conformance.stubborn",
)
async def stubborn(input: Onboard) -> None:
    """Never looks at its signal."""
    await asyncio.Event().wait()


@job(
    input=Onboard,
    idempotency_key=lambda i: f"unstoppable:{i.org_id}",
    timeout="30s",
    retry=Retry(attempts=1),
    name="conformance.unstoppable",
)
async def unstoppable(input: Onboard) -> str:
    """Never looks at its signal and swallows the cancel that follows, until its gate opens;
    then returns as if nothing had happened."""
    gate = gates.setdefault("unstoppable", asyncio.Event())
    while not gate.is_set():
        with contextlib.suppress(asyncio.CancelledError):
            await gate.wait()
    unstoppable_ended.append(input.org_id)
    return "finished anyway"


unstoppable_ended: list[str] = []
"""The ``unstoppable`` bodies that ended (after their attempt was given up)."""


@job(input=Onboard, idempotency_key=lambda i: f"own-task:{i.org_id}", name="conformance.own-task")
async def in_its_own_task(input: Onboard) -> bool:
    """Uses asyncio.timeout, which cancels the task it runs in when it expires."""
    try:
        async with asyncio.timeout(0):
            await asyncio.Event().wait()
    except TimeoutError:
        return True
    return False


@job(input=Onboard, idempotency_key=lambda i: f"progress:{i.org_id}", name="conformance.progress")
async def reports_progress(input: Onboard, step: Step, progress: Any) -> dict[str, int]:
    rows = await step.run("load", lambda: [1, 2, 3])
    for index, row in enumerate(rows):
        await step.run(f"row:{row}", lambda: None)
        progress(index + 1, len(rows))
    return {"rows": len(rows)}


gates: dict[str, asyncio.Event] = {}


@job(input=Onboard, idempotency_key=lambda i: f"drained:{i.org_id}", name="conformance.drained")
async def drained_mid_step(input: Onboard, step: Step) -> str:
    await step.run("first", lambda: record("first"))

    async def second() -> str:
        record("second-started")
        gate = gates.get("hold")
        if gate is not None:
            await gate.wait()
        return "done"

    return await step.run("second", second)
