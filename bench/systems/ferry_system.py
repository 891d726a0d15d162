"""ferry through its public API: ``@job``, ``.enqueue``/``.enqueue_many``, ``job_worker``
— on its Postgres driver here, on its Redis driver in ``ferry_redis_system``."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pydantic import BaseModel

from bench.systems import OnJob, Payload, count_rows
from ferry import job, set_job_driver
from ferry._worker import job_worker
from ferry.drivers import PostgresJobDriver, RedisJobDriver, postgres_job_driver

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


class FerryProducer:
    """Enqueues through the job handle, as an application does."""

    def __init__(self, driver: PostgresJobDriver | RedisJobDriver) -> None:
        self._driver = driver

    async def enqueue(self, payload: Payload) -> None:
        await noop.enqueue(dict(payload))

    async def enqueue_batch(self, payloads: Sequence[Payload]) -> None:
        await noop.enqueue_many([dict(p) for p in payloads])

    async def close(self) -> None:
        set_job_driver(None)
        await self._driver.close()


class FerrySystem:
    """ferry on its Postgres driver (default schema, default pool)."""

    name = "ferry"

    def driver(self, dsn: str) -> PostgresJobDriver | RedisJobDriver:
        """A driver with its defaults on the workload's fresh database."""
        return postgres_job_driver(dsn)

    async def unsettled(self, dsn: str) -> int:
        return await count_rows(dsn, "SELECT count(*) FROM ferry.jobs WHERE state <> 'completed'")

    async def install(self, dsn: str) -> None:
        driver = self.driver(dsn)
        await driver.open()
        await driver.close()

    async def producer(self, dsn: str) -> FerryProducer:
        driver = self.driver(dsn)
        await driver.open()
        set_job_driver(driver)
        return FerryProducer(driver)

    def worker_settings(self, concurrency: int | None, batch_size: int | None) -> str:
        return f"job_worker(concurrency={concurrency or _DEFAULT_CONCURRENCY})"

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
        _hook[:] = [on_job]
        driver = self.driver(dsn)
        await driver.open()
        worker = job_worker(
            driver=driver, jobs=[noop], concurrency=concurrency or _DEFAULT_CONCURRENCY
        )
        listening = asyncio.Event()
        driver.wake().add_health_listener(lambda healthy: listening.set() if healthy else None)
        await worker.start()
        await listening.wait()
        ready.set()
        await stop.wait()
        await worker.close()
        await driver.close()


SYSTEM = FerrySystem()
