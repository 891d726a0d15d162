"""The app the CLI and dashboard tests run against: a job with steps, a fan-out of it, one
task, a seed."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ferry import JobContext, Retry, Step, job, task, throw_if_aborted
from ferry._clock import FrozenClock
from ferry.drivers.protocol import JobDriver
from ferry.testing import Harness


class Greeting(BaseModel):
    name: str
    fail: bool = False


@job(
    input=Greeting,
    idempotency_key=lambda i: f"greet:{i.name}",
    tenant=lambda i: "acme",
    retry=Retry(attempts=2, base="1s"),
    name="cli.greet",
)
async def greet(input: Greeting, step: Step, progress: Any) -> dict[str, str]:
    said = await step.run("compose", lambda: f"hello {input.name}")
    await step.run("deliver", lambda: {"to": input.name})
    progress(2, 2)
    if input.fail:
        raise RuntimeError(f"cannot greet {input.name}")
    return {"said": said}


@job(input=Greeting, idempotency_key=lambda i: f"linger:{i.name}", name="cli.linger")
async def linger(input: Greeting, ctx: JobContext) -> None:
    """Runs until its signal aborts (a drain, a timeout, an operator's cancel)."""
    await ctx.signal.wait()
    throw_if_aborted(ctx)


@job(input=Greeting, idempotency_key=lambda i: f"roll-call:{i.name}", name="cli.roll_call")
async def roll_call(input: Greeting, step: Step) -> list[str]:
    """Greets two of a team (children), waits for both, and answers how each ended."""
    team = [(greet, {"name": f"{input.name}-{n}"}) for n in range(2)]
    outcomes = await step.wait("gather", await step.enqueue("greet-all", team), timeout="1h")
    return [outcome.state for outcome in outcomes]


async def seed_roll_call(driver: JobDriver, clock: FrozenClock) -> str:
    """One completed roll call of two children; answers the parent's run id."""
    harness = Harness(driver=driver, clock=clock, tasks=[])
    with harness.installed():
        parent = await roll_call.enqueue({"name": "team"})
        await harness.drain()
        return parent.job_id


nightly = task(
    cron="0 3 * * *",
    tz="Europe/Berlin",
    enqueue=lambda occurrence_ms: [(greet, {"name": f"nightly-{occurrence_ms}"})],
    name="cli.nightly",
)


async def seed(driver: JobDriver, clock: FrozenClock) -> None:
    """One completed run, one dead (its last error X_JOB_FAILED) and one queued on "later"."""
    harness = Harness(driver=driver, clock=clock, tasks=[])
    with harness.installed():
        await greet.enqueue({"name": "ada"})
        await greet.enqueue({"name": "bob", "fail": True})
        await harness.drain()
        await greet.enqueue({"name": "cyd"}, queue="later")
