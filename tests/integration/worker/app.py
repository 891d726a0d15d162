"""The app the worker processes under test run (``--app worker.app``).

Every job records its side effects in tables of the test's PostgreSQL schema
(``EFFECTS_SCHEMA`` on ``EFFECTS_DATABASE_URL`` where the queue is on another store, else
``FERRY_SCHEMA`` on ``DATABASE_URL``), so a test asserts on rows — how often each step's
effect ran, by which attempt and worker — rather than on anything inside the worker
process.
"""

from __future__ import annotations

import asyncio
import os
import time

import asyncpg
from pydantic import BaseModel

from ferry import Concurrency, Retry, job
from ferry._jobs.context import JobContext
from ferry._jobs.signal import AbortSignal
from ferry._jobs.step import Step

EFFECT_TABLES = """
CREATE SCHEMA IF NOT EXISTS {schema};
CREATE TABLE IF NOT EXISTS {schema}.effects (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_key text    NOT NULL,
    step    text    NOT NULL,
    attempt integer NOT NULL,
    worker  text    NOT NULL,
    at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS {schema}.intervals (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    grp     text    NOT NULL,
    idx     integer NOT NULL,
    started timestamptz NOT NULL DEFAULT clock_timestamp(),
    ended   timestamptz
);
"""

_pools: dict[asyncio.AbstractEventLoop, asyncio.Task[asyncpg.Pool]] = {}


async def _db() -> asyncpg.Pool:
    """This event loop's pool (one per loop: in-process tests each run their own loop)."""
    loop = asyncio.get_running_loop()
    creating = _pools.get(loop)
    if creating is None or (creating.done() and creating.exception() is not None):
        creating = _pools[loop] = loop.create_task(_create_pool())
    return await creating


async def _create_pool() -> asyncpg.Pool:
    dsn = os.environ.get("EFFECTS_DATABASE_URL") or os.environ["DATABASE_URL"]
    return await asyncpg.create_pool(dsn, min_size=1, max_size=4)


def _schema() -> str:
    return os.environ.get("EFFECTS_SCHEMA") or os.environ["FERRY_SCHEMA"]


async def _record_effect(key: str, step_name: str, ctx: JobContext) -> None:
    await (await _db()).execute(
        f'INSERT INTO "{_schema()}".effects (job_key, step, attempt, worker) '
        "VALUES ($1, $2, $3, $4)",
        key,
        step_name,
        ctx.attempt,
        ctx.worker_id,
    )


async def _sleep_unless_aborted(ms: int, signal: AbortSignal) -> None:
    """Sleep ``ms``, stopping (and raising the reason) the moment ``signal`` aborts."""
    try:
        await asyncio.wait_for(signal.wait(), ms / 1000)
    except TimeoutError:
        return
    signal.throw_if_aborted()


class ChainInput(BaseModel):
    key: str
    step_ms: list[int] = [0, 0, 0]


@job(
    input=ChainInput,
    idempotency_key=lambda i: f"chain:{i.key}",
    retry=Retry(attempts=1000, backoff="fixed", base="100ms"),
    name="chain",
)
async def chain(input: ChainInput, step: Step, ctx: JobContext) -> int:
    """Steps ``s0, s1, …``: each records its effect, then works ``step_ms[n]`` (signal-aware)."""
    for n, ms in enumerate(input.step_ms):

        async def effect(signal: AbortSignal, n: int = n, ms: int = ms) -> int:
            await _record_effect(input.key, f"s{n}", ctx)
            await _sleep_unless_aborted(ms, signal)
            return n

        await step.run(f"s{n}", effect)
    return len(input.step_ms)


class KeyInput(BaseModel):
    key: str


@job(input=KeyInput, idempotency_key=lambda i: f"stubborn:{i.key}", name="stubborn")
async def stubborn(input: KeyInput, ctx: JobContext, attempt: int) -> None:
    """Its first attempt ignores ``ctx.signal`` for a minute; later attempts finish at once."""
    await _record_effect(input.key, "start", ctx)
    if attempt == 1:
        for _ in range(600):
            await asyncio.sleep(0.1)


class KeyedInput(BaseModel):
    group: str
    idx: int
    hold_ms: int = 0


@job(
    input=KeyedInput,
    idempotency_key=lambda i: f"keyed:{i.group}:{i.idx}",
    concurrency=Concurrency(key=lambda i: i.group, limit=1),
    retry=Retry(attempts=100, backoff="fixed", base="100ms"),
    name="keyed",
)
async def keyed(input: KeyedInput) -> None:
    """Records the interval it ran in."""
    await _record_interval(input.group, input.idx, input.hold_ms)


async def _record_interval(group: str, idx: int, hold_ms: int) -> None:
    """Record the interval a body ran in on the server's clock (one clock for every worker)."""
    db = await _db()
    interval = await db.fetchval(
        f'INSERT INTO "{_schema()}".intervals (grp, idx) VALUES ($1, $2) RETURNING id',
        group,
        idx,
    )
    await asyncio.sleep(hold_ms / 1000)
    await db.execute(
        f'UPDATE "{_schema()}".intervals SET ended = clock_timestamp() WHERE id = $1', interval
    )


@job(
    input=KeyedInput,
    idempotency_key=lambda i: f"exclusive:{i.group}:{i.idx}",
    concurrency=Concurrency(key=lambda i: i.group, limit=1, when_busy="fail"),
    name="exclusive",
)
async def exclusive(input: KeyedInput) -> None:
    """Limit 1 per group, failing fast (not waiting) when the group is busy."""
    await _record_interval(input.group, input.idx, input.hold_ms)


class NoopInput(BaseModel):
    n: int


@job(input=NoopInput, idempotency_key=lambda i: f"noop:{i.n}", name="noop")
async def noop(input: NoopInput) -> None:
    """Does nothing: measures the queue, not the work."""


@job(
    input=NoopInput,
    idempotency_key=lambda i: f"capped:{i.n}",
    concurrency=Concurrency(limit=3),
    name="capped",
)
async def capped(input: NoopInput) -> None:
    """At most three at once across the fleet, under one job-wide key; records its interval."""
    await _record_interval("capped", input.n, 30)


@job(
    input=NoopInput,
    idempotency_key=lambda i: f"serial:{i.n}",
    concurrency=Concurrency(limit=1),
    name="serial",
)
async def serial(input: NoopInput) -> None:
    """One at a time across the fleet, doing nothing: measures the slot hand-over."""


class WedgeInput(BaseModel):
    seconds: float


@job(input=WedgeInput, idempotency_key=lambda i: f"wedge:{i.seconds}", name="wedge")
async def wedge(input: WedgeInput) -> None:
    """Blocks the event loop (a synchronous call in an async body): the bug liveness catches."""
    time.sleep(input.seconds)  # noqa: ASYNC251 — the deliberate bug under test


class LeafInput(BaseModel):
    key: str
    ms: int = 0


@job(
    input=LeafInput,
    idempotency_key=lambda i: f"leaf:{i.key}",
    retry=Retry(attempts=1000, backoff="fixed", base="100ms"),
    name="leaf",
)
async def leaf(input: LeafInput, ctx: JobContext) -> int:
    """A child of ``fan``: records that it ran, works ``ms`` (signal-aware), returns 1."""
    await _record_effect(input.key, "ran", ctx)
    await _sleep_unless_aborted(input.ms, ctx.signal)
    return 1


class FanInput(BaseModel):
    key: str
    children: int
    child_ms: int = 0


@job(
    input=FanInput,
    idempotency_key=lambda i: f"fan:{i.key}",
    retry=Retry(attempts=1000, backoff="fixed", base="100ms"),
    queue="parents",
    name="fan",
)
async def fan(input: FanInput, step: Step, ctx: JobContext) -> int:
    """Fans out ``children`` leaves, waits for them all, answers how many completed. Every
    execution records ``entered``; the one after the wait records ``resumed`` too."""
    await _record_effect(input.key, "entered", ctx)
    children = await step.enqueue(
        "fan-out",
        [(leaf, {"key": f"{input.key}/{n}", "ms": input.child_ms}) for n in range(input.children)],
    )
    outcomes = await step.wait("gather", children, timeout="10m")
    await _record_effect(input.key, "resumed", ctx)
    return sum(1 for outcome in outcomes if outcome.state == "completed")


class NapInput(BaseModel):
    key: str
    ms: int


@job(
    input=NapInput,
    idempotency_key=lambda i: f"nap:{i.key}",
    retry=Retry(attempts=100),
    name="nap",
)
async def nap(input: NapInput) -> None:
    """Works ``ms`` deaf to its signal (a call nothing interrupts), then completes, writing
    nothing but its settle: what a partition between a worker and its store cuts off."""
    await asyncio.sleep(input.ms / 1000)


class HoldInput(BaseModel):
    path: str


@job(input=HoldInput, idempotency_key=lambda i: f"hold:{i.path}", name="hold_file")
def hold_file(input: HoldInput) -> str:
    """A sync body that blocks its thread on a file lock the test holds: it marks
    ``<path>.started``, then waits for a shared lock until the test lets go."""
    import fcntl
    from pathlib import Path

    Path(f"{input.path}.started").touch()
    with open(input.path, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_SH)  # blocks, for as long as the test holds LOCK_EX
    return "released"
