"""The queues under test, each behind the same small seam.

A system installs itself into a fresh database, hands out a producer (its own enqueue
and batch enqueue APIs), runs its own natural worker with a no-op job, and counts the
jobs it has not finished yet. Only the worker subprocess runs a system's worker. ferry
runs three times: on its Postgres driver, on its SQLite driver (a file of its own beside
each fresh database) and on its Redis driver (a key prefix of its own on one
redis-server), so all three see the same workloads in the same order.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from importlib import import_module
from typing import Protocol, TypedDict, TypeVar

import asyncpg

T = TypeVar("T")


class Payload(TypedDict):
    """A bench job's input: a unique number and the instant it was enqueued (epoch s)."""

    n: int
    t0: float


OnJob = Callable[[int, float], None]
"""Called by the no-op job body with its payload's ``n`` and ``t0``."""

OnClaim = Callable[[float], None]
"""Called with the seconds each of the worker's claim statements took (ferry: its settle
and claim round trip; pgqueuer: its dequeue)."""


class Producer(Protocol):
    """A system's enqueue side, on its own connection(s)."""

    async def enqueue(self, payload: Payload) -> None:
        """One job, one round trip (the system's single enqueue)."""

    async def enqueue_batch(self, payloads: Sequence[Payload]) -> None:
        """Many jobs through the system's own batch API."""

    async def close(self) -> None:
        """Hand the connections back."""


class Counter(Protocol):
    """Counts a system's unfinished jobs (polled by the worker at the end of a drain)."""

    async def unsettled(self) -> int:
        """Jobs still queued or running (``0`` once the queue is drained)."""

    async def close(self) -> None:
        """Hand the connection back."""


class QueryCounter:
    """A ``Counter`` that runs one SQL count on one asyncpg connection."""

    def __init__(self, connection: asyncpg.Connection, query: str) -> None:
        self._connection = connection
        self._query = query

    @classmethod
    async def open(cls, dsn: str, query: str) -> QueryCounter:
        return cls(await asyncpg.connect(dsn), query)

    async def unsettled(self) -> int:
        return int(await self._connection.fetchval(self._query))

    async def close(self) -> None:
        await self._connection.close()


class System(Protocol):
    """One queue library as the benchmark drives it."""

    name: str
    loop: str
    """The event loop its worker runs on by default: ``uvloop`` for the systems whose own
    command runs on it when installed (ferry, pgqueuer), else ``asyncio``."""

    async def install(self, dsn: str) -> None:
        """Create the system's schema in the (fresh) database ``dsn``."""

    async def producer(self, dsn: str) -> Producer:
        """An open producer on ``dsn``."""

    async def counter(self, dsn: str) -> Counter:
        """An open counter of the jobs still queued or running."""

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
        on_claim: OnClaim | None = None,
    ) -> None:
        """Run the system's own worker until ``stop`` is set; set ``ready`` once it listens.

        ``None`` for ``concurrency`` or ``batch_size`` means the system's own default;
        ``on_claim``, where given, times each claim statement of the worker.
        """


SYSTEM_NAMES = ("ferry", "ferry-sqlite", "ferry-redis", "pgqueuer", "procrastinate")
"""What a full run measures."""

_SYSTEMS = {
    "ferry": ("bench.systems.ferry_system", "SYSTEM"),
    "ferry-sqlite": ("bench.systems.ferry_sqlite_system", "SYSTEM"),
    "ferry-sqlite-normal": ("bench.systems.ferry_sqlite_system", "NORMAL_SYSTEM"),
    "ferry-redis": ("bench.systems.ferry_redis_system", "SYSTEM"),
    "pgqueuer": ("bench.systems.pgqueuer_system", "SYSTEM"),
    "procrastinate": ("bench.systems.procrastinate_system", "SYSTEM"),
}
"""Every system ``--systems`` may name (``ferry-sqlite-normal``: synchronous=NORMAL)."""

KNOWN_SYSTEMS = tuple(_SYSTEMS)


def timed(call: Callable[..., Awaitable[T]], on_claim: OnClaim) -> Callable[..., Awaitable[T]]:
    """``call``, reporting how long each call took to ``on_claim``."""

    async def timed_call(*args: object, **kwargs: object) -> T:
        started = time.perf_counter()
        try:
            return await call(*args, **kwargs)
        finally:
            on_claim(time.perf_counter() - started)

    return timed_call


def load_system(name: str) -> System:
    """The system called ``name`` (its module is imported only when asked for)."""
    module, attribute = _SYSTEMS[name]
    system: System = getattr(import_module(module), attribute)
    return system
