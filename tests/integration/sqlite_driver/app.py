"""The app the SQLite process tests run (``--app sqlite_driver.app``).

Its jobs record their side effects in an ``effects`` table of the very file the queue is
in (``DATABASE_URL``), through a connection of their own, so a test asserts on rows —
how often each step's effect ran and by which attempt — written by real worker processes.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time

from pydantic import BaseModel

from ferry import Concurrency, Retry, job
from ferry._jobs.context import JobContext
from ferry._jobs.signal import AbortSignal
from ferry._jobs.step import Step
from ferry.drivers._sqlite.target import sqlite_target

EFFECTS = """
CREATE TABLE IF NOT EXISTS effects (
    id      INTEGER PRIMARY KEY,
    job_key TEXT    NOT NULL,
    step    TEXT    NOT NULL,
    attempt INTEGER NOT NULL,
    worker  TEXT    NOT NULL
);
CREATE TABLE IF NOT EXISTS intervals (
    id         INTEGER PRIMARY KEY,
    grp        TEXT    NOT NULL,
    idx        INTEGER NOT NULL,
    started_ns INTEGER NOT NULL,
    ended_ns   INTEGER
);
"""


def database_path() -> str:
    """The file ``DATABASE_URL`` names (the queue's own)."""
    target = sqlite_target(os.environ["DATABASE_URL"], synchronous=None, busy_timeout_ms=None)
    return str(target.path)


def _write(sql: str, *parameters: object) -> int:
    """Run one write on the file through a connection of the job's own; the row's id."""
    connection = sqlite3.connect(database_path(), timeout=30, isolation_level=None)
    try:
        return int(connection.execute(sql, parameters).lastrowid or 0)
    finally:
        connection.close()


def _insert_effect(key: str, step: str, attempt: int, worker: str) -> None:
    _write(
        "INSERT INTO effects (job_key, step, attempt, worker) VALUES (?, ?, ?, ?)",
        key,
        step,
        attempt,
        worker,
    )


async def _sleep_unless_aborted(ms: int, signal: AbortSignal) -> None:
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
    """Steps ``s0, s1, …``: each records its effect, then works ``step_ms[n]``."""
    for n, ms in enumerate(input.step_ms):

        async def effect(signal: AbortSignal, n: int = n, ms: int = ms) -> int:
            await asyncio.to_thread(_insert_effect, input.key, f"s{n}", ctx.attempt, ctx.worker_id)
            await _sleep_unless_aborted(ms, signal)
            return n

        await step.run(f"s{n}", effect)
    return len(input.step_ms)


class NoopInput(BaseModel):
    n: int


@job(input=NoopInput, idempotency_key=lambda i: f"noop:{i.n}", name="noop")
async def noop(input: NoopInput) -> None:
    """Does nothing: the queue is what is under test."""


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
    """Records the interval it ran in (one host: every process reads the same clock)."""
    interval = await asyncio.to_thread(
        _write,
        "INSERT INTO intervals (grp, idx, started_ns) VALUES (?, ?, ?)",
        input.group,
        input.idx,
        time.time_ns(),
    )
    await asyncio.sleep(input.hold_ms / 1000)
    await asyncio.to_thread(
        _write, "UPDATE intervals SET ended_ns = ? WHERE id = ?", time.time_ns(), interval
    )
