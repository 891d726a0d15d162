"""Sync (``def``) bodies and sync step functions for the conformance tests.

Each records the name of the thread it ran on, so a test asserts that blocking code ran
on the worker's pool and never on the event loop's thread.
"""

from __future__ import annotations

import threading
from typing import Any

from pydantic import BaseModel

from ferry import JobContext, Retry, Step, SyncStep, job, throw_if_aborted

from .jobs_fixture import record

threads: list[tuple[str, str]] = []
"""(what ran, the thread it ran on), in order."""

gates: dict[str, threading.Event] = {}
"""Events a blocking body waits on; a test sets them."""


def reset() -> None:
    threads.clear()
    gates.clear()


def _ran(what: str) -> str:
    threads.append((what, threading.current_thread().name))
    return what


class Order(BaseModel):
    order_id: str


class Warehouse:
    """A blocking warehouse API that can be told to fail once."""

    def __init__(self) -> None:
        self.fail_next: set[str] = set()
        self.shipped: list[str] = []

    def ship(self, order_id: str) -> str:
        _ran("ship")
        if order_id in self.fail_next:
            self.fail_next.discard(order_id)
            raise ConnectionError(f"{order_id}: carrier unavailable")
        self.shipped.append(order_id)
        return f"{order_id}-shipped"


warehouse = Warehouse()


@job(
    input=Order,
    idempotency_key=lambda i: f"fulfil:{i.order_id}",
    retry=Retry(attempts=3, backoff="fixed", base="1s"),
    name="conformance.sync-fulfil",
)
def fulfil(input: Order, step: SyncStep, ctx: JobContext) -> dict[str, Any]:
    """A sync body with sync steps: reserve, a durable sleep, then ship (which may fail)."""
    _ran("body")
    reserved = step.run("reserve", lambda: {"order": input.order_id, "bin": _ran("reserve")})
    step.sleep("cool-off", "1h")
    shipped = step.run("ship", lambda: warehouse.ship(input.order_id))
    return {"bin": reserved["bin"], "shipped": shipped, "attempt": ctx.attempt}


@job(
    input=Order,
    idempotency_key=lambda i: f"blocking-step:{i.order_id}",
    name="conformance.blocking-step",
)
async def blocking_step(input: Order, step: Step) -> str:
    """An async body whose step function is sync: it runs off the loop."""
    return await step.run("blocking", lambda: _ran("sync-step"))


@job(
    input=Order,
    idempotency_key=lambda i: f"sync-cooperative:{i.order_id}",
    timeout="30s",
    retry=Retry(attempts=2),
    name="conformance.sync-cooperative",
)
def sync_cooperative(input: Order, ctx: JobContext) -> None:
    """Blocks its thread until its signal aborts, then stops as asked."""
    record("before")
    ctx.signal.wait_blocking()
    assert ctx.signal.reason is not None
    record(f"aborted:{ctx.signal.reason.code}")
    throw_if_aborted(ctx)


@job(
    input=Order,
    idempotency_key=lambda i: f"sync-stubborn:{i.order_id}",
    timeout="30s",
    retry=Retry(attempts=1),
    name="conformance.sync-stubborn",
)
def sync_stubborn(input: Order, step: SyncStep) -> None:
    """Ignores its signal: blocks until the test opens its gate, then tries one more step."""
    record("before")
    gates["stubborn"].wait()
    record("returned")
    step.run("after-the-deadline", lambda: _ran("after-the-deadline"))
