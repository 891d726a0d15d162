"""The demo's jobs: an onboarding flow with durable steps, a team onboarding that fans it
out and waits for every org, a digest, and a long reindex."""

from __future__ import annotations

import asyncio
import contextlib
from uuid import UUID

from pydantic import BaseModel

from ferry import AbortSignal, JobContext, Retry, Step, job, throw_if_aborted


class OnboardInput(BaseModel):
    org_id: UUID
    flaky_mail: bool = False


class TeamInput(BaseModel):
    team: str
    org_ids: list[UUID]


class DigestInput(BaseModel):
    occurrence_ms: int


class ReindexInput(BaseModel):
    catalog: str
    batches: int = 30
    batch_seconds: float = 1.0


_failed_once: set[UUID] = set()


async def send_mail(org_id: UUID, kind: str, *, flaky: bool) -> str:
    """Stands in for an SMTP call; a flaky org's first nudge fails once."""
    if flaky and kind == "nudge" and org_id not in _failed_once:
        _failed_once.add(org_id)
        raise ConnectionError(f"{kind} for {org_id}: mail server unavailable")
    return f"{kind}:{org_id}"


@job(
    input=OnboardInput,
    tenant=lambda i: str(i.org_id),
    idempotency_key=lambda i: f"onboard:{i.org_id}",
    retry=Retry(attempts=5, backoff="exponential", base="200ms"),
    timeout="30s",
)
async def onboard_org(input: OnboardInput, step: Step, ctx: JobContext) -> dict[str, str]:
    org = await step.run("provision", lambda: {"org": str(input.org_id), "plan": "free"})
    await step.run(
        "welcome-email", lambda: send_mail(input.org_id, "welcome", flaky=input.flaky_mail)
    )
    await step.sleep("cool-off", "1s")
    throw_if_aborted(ctx)
    await step.run("nudge", lambda: send_mail(input.org_id, "nudge", flaky=input.flaky_mail))
    return {"org": org["org"], "plan": org["plan"]}


@job(input=TeamInput, idempotency_key=lambda i: f"onboard-team:{i.team}")
async def onboard_team(input: TeamInput, step: Step) -> dict[str, int]:
    """Onboards every org of a team at once (one child run each, retried and slept on by
    itself), parks without holding a worker until the last one ends, and answers the tally.
    The first org's mail server fails once: its child retries, and the team still waits."""
    children = await step.enqueue(
        "onboard-each",
        [
            (onboard_org, {"org_id": org, "flaky_mail": index == 0})
            for index, org in enumerate(input.org_ids)
        ],
    )
    outcomes = await step.wait("all-onboarded", children, timeout="5m")
    plans = [outcome.result["plan"] for outcome in outcomes if outcome.result is not None]
    return {"onboarded": len(plans), "free": plans.count("free"), "orgs": len(outcomes)}


@job(input=DigestInput, idempotency_key=lambda i: f"digest:{i.occurrence_ms}")
async def send_digest(input: DigestInput, step: Step) -> None:
    await step.run("compose", lambda: {"for": input.occurrence_ms})


async def index_batch(batch: int, seconds: float, signal: AbortSignal) -> int:
    """Stands in for one slow batch of index writes; returns early when the run is aborted
    (the step is then not recorded, and runs again wherever the run resumes)."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(signal.wait(), seconds)
    return batch


@job(input=ReindexInput, idempotency_key=lambda i: f"reindex:{i.catalog}", name="reindex_catalog")
async def reindex_catalog(input: ReindexInput, step: Step) -> dict[str, int]:
    """A long job in durable batches: a worker drained mid-run (a deploy, a deleted pod)
    gives the run back uncounted, and the next worker resumes at the first unrecorded batch."""
    for batch in range(input.batches):
        await step.run(
            f"batch-{batch}",
            lambda signal, batch=batch: index_batch(batch, input.batch_seconds, signal),
        )
    return {"batches": input.batches}
