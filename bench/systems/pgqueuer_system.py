"""pgqueuer as its README runs it: ``Queries.enqueue`` and a ``QueueManager`` on asyncpg."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import asyncpg
from pgqueuer import AsyncpgDriver, Job, Queries, QueueManager

from bench.systems import OnClaim, OnJob, Payload, QueryCounter, timed

DEFAULT_BATCH_SIZE = 10
"""``QueueManager.run(batch_size=...)``'s default in pgqueuer 1.6.0."""


def _encoded(payload: Payload) -> bytes:
    return json.dumps(payload).encode()


class PgqueuerProducer:
    """Enqueues on one asyncpg connection, scalar or list arguments."""

    def __init__(self, connection: asyncpg.Connection) -> None:
        self._connection = connection
        self._queries = Queries(AsyncpgDriver(connection))

    async def enqueue(self, payload: Payload) -> None:
        await self._queries.enqueue("noop", _encoded(payload))

    async def enqueue_batch(self, payloads: Sequence[Payload]) -> None:
        await self._queries.enqueue(
            ["noop"] * len(payloads), [_encoded(p) for p in payloads], [0] * len(payloads)
        )

    async def close(self) -> None:
        await self._connection.close()


class PgqueuerSystem:
    """pgqueuer with its default (durable) tables."""

    name = "pgqueuer"
    loop = "uvloop"

    async def install(self, dsn: str) -> None:
        connection = await asyncpg.connect(dsn)
        try:
            await Queries(AsyncpgDriver(connection)).install()
        finally:
            await connection.close()

    async def counter(self, dsn: str) -> QueryCounter:
        # Finished jobs move from the queue table to the log table.
        return await QueryCounter.open(dsn, "SELECT count(*) FROM pgqueuer")

    async def producer(self, dsn: str) -> PgqueuerProducer:
        return PgqueuerProducer(await asyncpg.connect(dsn))

    def worker_settings(self, concurrency: int | None, batch_size: int | None) -> str:
        size = batch_size or DEFAULT_BATCH_SIZE
        # concurrency_limit=0 is pgqueuer's "no limit" (its default).
        return (
            f"QueueManager.run(batch_size={size}), entrypoint concurrency_limit={concurrency or 0}"
        )

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
        connection = await asyncpg.connect(dsn)
        queries = Queries(AsyncpgDriver(connection))
        if on_claim is not None:
            queries.dequeue = timed(queries.dequeue, on_claim)  # type: ignore[method-assign]
        manager = QueueManager(queries)

        @manager.entrypoint("noop", concurrency_limit=concurrency or 0)
        async def noop(job: Job) -> None:
            payload = json.loads(job.payload or b"{}")
            on_job(payload["n"], payload["t0"])

        running = asyncio.create_task(manager.run(batch_size=batch_size or DEFAULT_BATCH_SIZE))
        # The listener is set up inside run(); give it a moment before declaring ready.
        await asyncio.sleep(0.5)
        ready.set()
        await stop.wait()
        manager.shutdown.set()
        await running
        await connection.close()


SYSTEM = PgqueuerSystem()
