"""The app the SQLite process tests run (``--app sqlite_driver.app``).

``keyed`` records the interval it ran in, in an ``intervals`` table of the very file the
queue is in (``DATABASE_URL``), through a connection of its own, so a test asserts on rows
written by real worker processes.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time

from pydantic import BaseModel

from ferry import Concurrency, Retry, job
from ferry._jobs.step import Step
from ferry.drivers._sqlite.target import sqlite_target

TABLES = """
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


class ChainInput(BaseModel):
    key: str


@job(input=ChainInput, idempotency_key=lambda i: f"chain:{i.key}", name="chain")
async def chain(input: ChainInput, step: Step) -> int:
    """Three steps, each memoized in the queue's file."""
    for n in range(3):
        await step.run(f"s{n}", lambda n=n: n)
    return 3


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
