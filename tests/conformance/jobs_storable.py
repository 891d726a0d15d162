"""Jobs whose keys, names and payloads come straight from the input: the storable-text rules."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ferry import Concurrency, Retry, Step, job

#: Text no driver stores, by name: an input cannot carry it, so the bodies make it.
UNSTORABLE = {"nul": "a\x00b", "surrogate": "a\ud800b", "long": "x" * 100_000}


class Blob(BaseModel):
    key: str
    data: Any = None
    tenant: str | None = None
    group: str = "g"
    text: str = ""


@job(input=Blob, idempotency_key=lambda i: i.key, name="conformance.blob")
async def blob(input: Blob) -> None:
    return None


@job(
    input=Blob,
    idempotency_key=lambda i: i.key,
    tenant=lambda i: i.tenant,
    name="conformance.tenanted",
)
async def tenanted(input: Blob) -> None:
    return None


@job(
    input=Blob,
    idempotency_key=lambda i: i.key,
    concurrency=Concurrency(key=lambda i: i.group, limit=5, when_busy="wait"),
    name="conformance.grouped",
)
async def grouped(input: Blob) -> None:
    return None


@job(
    input=Blob,
    idempotency_key=lambda i: i.key,
    retry=Retry(attempts=1),
    name="conformance.step_returns_text",
)
async def step_returns_text(input: Blob, step: Step) -> None:
    await step.run("echo", lambda: {"text": UNSTORABLE[input.text]})


@job(
    input=Blob,
    idempotency_key=lambda i: i.key,
    retry=Retry(attempts=1),
    name="conformance.raises_text",
)
async def raises_text(input: Blob) -> None:
    raise RuntimeError(UNSTORABLE[input.text])
