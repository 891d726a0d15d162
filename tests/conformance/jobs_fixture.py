"""Jobs the conformance tests declare, and the side-effect ledger they write to."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel

from ferry import Concurrency, Retry, job
from ferry._jobs.definition import Settled


class Item(BaseModel):
    id: str
    fail_times: int = 0


effects: Counter[str] = Counter()
settled: list[Settled[Any, Any]] = []


def reset() -> None:
    effects.clear()
    settled.clear()


def record(kind: str) -> None:
    effects[kind] += 1


@job(
    input=Item,
    idempotency_key=lambda i: f"flaky:{i.id}",
    retry=Retry(attempts=3, base="1s", max="30s"),
    on_settled=settled.append,
    name="conformance.flaky",
)
async def flaky(input: Item, attempt: int, final_attempt: bool) -> dict[str, Any]:
    record(f"attempt:{attempt}:final={final_attempt}")
    if attempt <= input.fail_times:
        raise RuntimeError(f"planned failure {attempt}")
    return {"id": input.id, "attempt": attempt}


@job(
    input=Item,
    idempotency_key=lambda i: f"keyed:{i.id}",
    concurrency=Concurrency(key=lambda i: "shared", limit=1, when_busy="wait"),
    name="conformance.keyed",
)
async def keyed(input: Item) -> None:
    record(f"keyed:{input.id}")


@job(
    input=Item,
    idempotency_key=lambda i: f"strict:{i.id}",
    concurrency=Concurrency(limit=1, when_busy="fail"),
    on_settled=settled.append,
    name="conformance.strict",
)
async def strict(input: Item) -> None:
    record(f"strict:{input.id}")
