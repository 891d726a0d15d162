"""Jobs with results, fan-outs and fan-ins, for the conformance tests."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from pydantic import BaseModel

from ferry import NoRetry, RateLimit, Retry, Step, SyncStep, job

from .jobs_fixture import record


class Number(BaseModel):
    n: int


class Square(BaseModel):
    n: int
    square: int
    at: datetime


class Tag(BaseModel):
    id: UUID


@job(input=Number, idempotency_key=lambda i: f"square:{i.n}", name="wf.square")
async def square(input: Number) -> Square:
    """Completes with a model (1 and 2), dies with its own code (13), or sleeps for three
    days first (7): a child that keeps its parent waiting."""
    record(f"square:{input.n}")
    if input.n == 13:
        raise NoRetry("X_VALIDATION", "13 is not squared here", "pick another number")
    return Square(n=input.n, square=input.n * input.n, at=datetime(2026, 1, 1))


@job(input=Number, idempotency_key=lambda i: f"slow:{i.n}", name="wf.slow")
async def slow(input: Number, step: Step) -> int:
    """Sleeps three days, then returns its number."""
    await step.sleep("nap", "3d")
    return input.n


@job(input=Number, idempotency_key=lambda i: f"tag:{i.n}", name="wf.tag")
async def tag(input: Number) -> Tag:
    return Tag(id=UUID(int=input.n))


@job(input=Number, idempotency_key=lambda i: f"opaque:{i.n}", name="wf.opaque")
async def opaque(input: Number) -> object:
    """Returns a value with no JSON form."""
    return {"raw": b"bytes"}


@job(input=Number, idempotency_key=lambda i: f"huge:{i.n}", name="wf.huge")
async def huge(input: Number) -> str:
    return "x" * input.n


@job(
    input=Number,
    idempotency_key=lambda i: f"sum:{i.n}",
    retry=Retry(attempts=3, base="1s"),
    name="wf.sum",
)
async def sum_of_squares(input: Number, step: Step) -> int:
    """Fans out one square per number below n, waits for them all, adds the squares up;
    ``fail:after-fan-out`` in the ledger makes its first attempt fail right after the
    fan-out (a crash between the fan-out and the wait)."""
    record("sum:started")
    children = await step.enqueue("fan-out", [(square, {"n": k}) for k in range(input.n)])
    record("sum:fanned-out")
    if record_once("fail:after-fan-out"):
        raise RuntimeError("crashed after the fan-out")
    outcomes = await step.wait("gather", children, timeout="1d")
    record("sum:resumed")
    return sum(o.result.square for o in outcomes if o.result is not None)


@job(input=Number, idempotency_key=lambda i: f"mixed:{i.n}", name="wf.mixed")
async def mixed(input: Number, step: Step) -> list[str]:
    """Waits for one child of each ending: completed (2), dead (13), sleeping 3 days (7,
    cancelled by the test) — and answers what it saw, in order."""
    children = await step.enqueue(
        "fan-out", [(square, {"n": 2}), (square, {"n": 13}), (slow, {"n": 7})]
    )
    outcomes = await step.wait("gather", children, timeout="7d")
    record("mixed:resumed")
    return [f"{o.state}:{o.result!r}:{o.code}" for o in outcomes]


@job(input=Number, idempotency_key=lambda i: f"patient:{i.n}", name="wf.patient")
async def patient(input: Number, step: Step) -> int:
    """Waits one day for a child that sleeps three."""
    children = await step.enqueue("fan-out", [(slow, {"n": input.n})])
    outcomes = await step.wait("gather", children, timeout="1d")
    return outcomes[0].result or 0


@job(input=Number, idempotency_key=lambda i: f"big:{i.n}", name="wf.big")
async def big_fan_out(input: Number, step: Step) -> int:
    """A fan-out of n children, more than one batch."""
    children = await step.enqueue("fan-out", [(tag, {"n": k}) for k in range(input.n)])
    outcomes = await step.wait("gather", children, timeout="1d")
    return sum(1 for o in outcomes if o.state == "completed")


@job(
    input=Number,
    idempotency_key=lambda i: f"metered:{i.n}",
    rate=RateLimit(limit=1, per="1s"),
    name="wf.metered",
)
async def metered(input: Number) -> int:
    """A rated child: one start per second across the fleet."""
    return input.n


@job(input=Number, idempotency_key=lambda i: f"sync-sum:{i.n}", name="wf.sync-sum")
def sync_sum(input: Number, step: SyncStep) -> int:
    """A ``def`` parent: fans out n rated children and adds them up, without ``await``."""
    children = step.enqueue("fan-out", [(metered, {"n": k}) for k in range(input.n)])
    outcomes = step.wait("gather", children, timeout="1d")
    record("sync-sum:resumed")
    return sum(o.result or 0 for o in outcomes)


def record_once(kind: str) -> bool:
    """True the first time ``kind`` is asked after the test armed it (``arm``)."""
    if armed.get(kind):
        armed[kind] = False
        return True
    return False


armed: dict[str, bool] = {}
