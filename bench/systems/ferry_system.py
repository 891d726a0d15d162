"""ferry through its public API: ``@job``, ``.enqueue``/``.enqueue_many``, ``job_worker``.

The same system runs on each durable driver: ``FerrySystem`` is given how to build the
driver for a fresh database and how to count its unfinished runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from pydantic import BaseModel

from bench.systems import Counter, OnClaim, OnJob, Payload, QueryCounter, timed
from ferry import RateLimit, job, set_job_driver
from ferry._worker import job_worker
from ferry.drivers import postgres_job_driver
from ferry.drivers.protocol import JobDriver

_hook: list[OnJob] = []
_DEFAULT_CONCURRENCY = 10
"""``job_worker``'s default concurrency."""


class NoopInput(BaseModel):
    """The bench payload as ferry's input model."""

    n: int
    t0: float


@job(input=NoopInput, idempotency_key=lambda i: f"noop:{i.n}", name="bench-noop")
async def noop(input: NoopInput) -> None:
    """The no-op job: reports its start to the bench and returns."""
    _hook[0](input.n, input.t0)


RATED_KEYS = 100
"""The keys ``rated`` spreads its runs over (run ``n`` counts under key ``n % 100``)."""


@job(
    input=NoopInput,
    idempotency_key=lambda i: f"rated:{i.n}",
    rate=RateLimit(limit=1_000, per="1s", key=lambda i: str(i.n % RATED_KEYS)),
    name="bench-rated",
)
async def rated(input: NoopInput) -> None:
    """The no-op job under a rate limit: what the claim latency with rated jobs measures."""
    _hook[0](input.n, input.t0)


class FerryProducer:
    """Enqueues through the job handle, as an application does."""

    def __init__(self, driver: JobDriver) -> None:
        self._driver = driver

    async def enqueue(self, payload: Payload) -> None:
        await noop.enqueue(dict(payload))

    async def enqueue_batch(self, payloads: Sequence[Payload]) -> None:
        await noop.enqueue_many([dict(p) for p in payloads])

    async def close(self) -> None:
        set_job_driver(None)
        await self._driver.close()


class FerrySystem:
    """ferry on the driver ``build`` makes for a database (default settings otherwise)."""

    def __init__(
        self,
        name: str,
        build: Callable[[str], JobDriver],
        counter: Callable[[str], Awaitable[Counter]],
        driver_settings: str,
    ) -> None:
        self.name = name
        self.loop = "uvloop"
        """``ferry`` runs every command on uvloop when it is installed (``ferry[uvloop]``)."""
        self._build = build
        self._counter = counter
        self._driver_settings = driver_settings

    def driver(self, dsn: str) -> JobDriver:
        """The driver this system runs on for database ``dsn``, not yet opened."""
        return self._build(dsn)

    async def install(self, dsn: str) -> None:
        driver = self._build(dsn)
        await driver.open()
        await driver.close()

    async def counter(self, dsn: str) -> Counter:
        return await self._counter(dsn)

    async def producer(self, dsn: str) -> FerryProducer:
        driver = self._build(dsn)
        await driver.open()
        set_job_driver(driver)
        return FerryProducer(driver)

    def worker_settings(self, concurrency: int | None, batch_size: int | None) -> str:
        worker = f"job_worker(concurrency={concurrency or _DEFAULT_CONCURRENCY})"
        return f"{self._driver_settings}, {worker}"

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
        _hook[:] = [on_job]
        driver = self._build(dsn)
        await driver.open()
        if on_claim is not None:
            driver.settle_and_claim = timed(driver.settle_and_claim, on_claim)  # type: ignore[method-assign]
        worker = job_worker(
            driver=driver, jobs=[noop], concurrency=concurrency or _DEFAULT_CONCURRENCY
        )
        listening = asyncio.Event()
        wake = driver.wake()
        wake.add_health_listener(  # type: ignore[attr-defined]
            lambda healthy: listening.set() if healthy else None
        )
        await worker.start()
        await listening.wait()
        ready.set()
        await stop.wait()
        await worker.close()
        await driver.close()


class StatsCounter:
    """Counts unfinished runs through the driver's own ``stats()`` (the drivers whose
    store a SQL count cannot reach: SQLite's file, Redis)."""

    def __init__(self, driver: JobDriver) -> None:
        self._driver = driver

    async def unsettled(self) -> int:
        return sum(
            n
            for s in await self._driver.stats()
            for state, n in s.counts.items()
            if state != "completed"
        )

    async def close(self) -> None:
        await self._driver.close()


async def _count_postgres(dsn: str) -> Counter:
    return await QueryCounter.open(
        dsn, "SELECT count(*) FROM ferry.jobs WHERE state <> 'completed'"
    )


SYSTEM = FerrySystem(
    "ferry",
    postgres_job_driver,
    _count_postgres,
    "postgres_job_driver(dsn) (schema ferry, pool of 10)",
)
