"""The queues under test (ferry on Postgres and on Redis, pgqueuer, procrastinate), each
behind the same small seam.

A system installs itself into a fresh database, hands out a producer (its own enqueue
and batch enqueue APIs), runs its own natural worker with a no-op job, and counts the
jobs it has not finished yet. Only the worker subprocess runs a system's worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Protocol, TypedDict

import asyncpg


class Payload(TypedDict):
    """A bench job's input: a unique number and the instant it was enqueued (epoch s)."""

    n: int
    t0: float


OnJob = Callable[[int, float], None]
"""Called by the no-op job body with its payload's ``n`` and ``t0``."""


class Producer(Protocol):
    """A system's enqueue side, on its own connection(s)."""

    async def enqueue(self, payload: Payload) -> None:
        """One job, one round trip (the system's single enqueue)."""

    async def enqueue_batch(self, payloads: Sequence[Payload]) -> None:
        """Many jobs through the system's own batch API."""

    async def close(self) -> None:
        """Hand the connections back."""


class System(Protocol):
    """One queue library as the benchmark drives it."""

    name: str

    async def install(self, dsn: str) -> None:
        """Create the system's schema in the (fresh) database ``dsn``."""

    async def producer(self, dsn: str) -> Producer:
        """An open producer on ``dsn``."""

    async def unsettled(self, dsn: str) -> int:
        """How many jobs are still queued or running (``0`` once the queue is drained)."""

    def worker_settings(self, concurrency: int | None, batch_size: int | None) -> str:
        """How ``work`` configures the system's worker, for the table's footnotes."""

    async def work(
        self,
        dsn: str,
        *,
        concurrency: int | None,
        batch_size: int | None,
        on_job: OnJob,
        ready: asyncio.Event,
        stop: asyncio.Event,
    ) -> None:
        """Run the system's own worker until ``stop`` is set; set ``ready`` once it listens.

        ``None`` for ``concurrency`` or ``batch_size`` means the system's own default.
        """


SYSTEM_NAMES = ("ferry", "ferry-redis", "pgqueuer", "procrastinate")


def load_system(name: str) -> System:
    """The system called ``name`` (its module is imported only when asked for)."""
    module = import_module(f"bench.systems.{name.replace('-', '_')}_system")
    system: System = module.SYSTEM
    return system


_counting: dict[str, asyncpg.Connection] = {}


async def count_rows(dsn: str, query: str) -> int:
    """``query``'s count on ``dsn``, over one connection kept for the process (the drain
    polls this every few milliseconds)."""
    connection = _counting.get(dsn)
    if connection is None or connection.is_closed():
        connection = _counting[dsn] = await asyncpg.connect(dsn)
    return int(await connection.fetchval(query))
