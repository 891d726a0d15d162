"""One round trip per operation, whatever the batch size: the queue's throughput contract.

The one exception is a duplicate enqueue, which reads the existing run's id separately.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest
from support.runs import send

from ferry._clock import FrozenClock
from ferry.drivers import PostgresJobDriver, postgres_job_driver
from ferry.drivers._postgres.ready import TEND_EVERY_MS
from ferry.drivers.protocol import (
    AckOptions,
    ClaimOptions,
    HeartbeatOptions,
    NackOptions,
    StepRecord,
)


class StatementLog:
    """Every statement the driver sends on its (borrowed, one-connection) pool."""

    def __init__(self, schema: str) -> None:
        self._schema = schema
        self.statements: list[str] = []

    def record(self, logged: asyncpg.connection.LoggedQuery) -> None:
        if self._schema in logged.query:  # not asyncpg's own reset/introspection queries
            self.statements.append(logged.query)

    def count_from_here(self) -> int:
        count = len(self.statements)
        self.statements.clear()
        return count


@pytest.fixture
async def logged(
    postgres_dsn: str, pg_schema: str, clock: FrozenClock
) -> AsyncIterator[tuple[PostgresJobDriver, StatementLog]]:
    log = StatementLog(pg_schema)

    async def install(connection: asyncpg.Connection) -> None:
        connection.add_query_logger(log.record)

    async with asyncpg.create_pool(postgres_dsn, min_size=1, max_size=1, init=install) as pool:
        driver = postgres_job_driver(pool, schema=pg_schema, clock=clock)
        await driver.open()
        yield driver, log
        await driver.close()


async def test_every_queue_operation_is_one_statement(
    logged: tuple[PostgresJobDriver, StatementLog], clock: FrozenClock
) -> None:
    driver, log = logged
    # Warm up: asyncpg learns the array types once per connection; the first claim also
    # takes the fleet's turn to tend the ready set, a statement of its own at most once a
    # second (the clock stands still below).
    await driver.enqueue(send("warm-up"))
    await driver.settle_many([("1", AckOptions("nobody"))])
    await driver.claim(ClaimOptions("w", 30_000, limit=1))
    log.count_from_here()

    await driver.enqueue(send("single"))
    assert log.count_from_here() == 1
    await driver.enqueue_many([send(f"batch-{i}") for i in range(300)])
    assert log.count_from_here() == 1
    # A key that already has a run costs a second statement to read that run's id.
    await driver.enqueue_many([send(f"again-{i}") for i in range(10)] + [send("single")])
    assert log.count_from_here() == 2
    claimed = await driver.claim(ClaimOptions("w", 30_000, limit=200))
    assert len(claimed) == 200 and log.count_from_here() == 1
    assert await driver.heartbeat(claimed[0].id, HeartbeatOptions("w", 30_000))
    assert log.count_from_here() == 1
    step = StepRecord("s", "run", {"n": 1}, clock.now_ms(), clock.now_ms())
    assert await driver.steps.record(claimed[0].id, step, worker_id="w")
    assert log.count_from_here() == 1
    assert await driver.ack(claimed[0].id, AckOptions("w"))
    assert log.count_from_here() == 1
    assert await driver.nack(claimed[1].id, NackOptions("w", "retry"))
    assert log.count_from_here() == 1
    settles = [(c.id, AckOptions("w")) for c in claimed[2:100]]
    assert await driver.settle_many(settles) == [True] * 98
    assert log.count_from_here() == 1
    # The worker's round trip: a burst of settles and the next claim, one statement.
    settles = [(c.id, AckOptions("w")) for c in claimed[100:]]
    landed, again = await driver.settle_and_claim(settles, ClaimOptions("w", 30_000, limit=50))
    assert landed == [True] * 100 and len(again) == 50
    assert log.count_from_here() == 1
    assert await driver.slots.acquire("k", holder="1", limit=2, ttl_ms=1_000)
    assert log.count_from_here() == 1
    clock.set(clock.now_ms() + TEND_EVERY_MS)
    assert len(await driver.claim(ClaimOptions("w", 30_000, limit=1))) == 1
    assert log.count_from_here() == 2, "a claim whose process tends the ready set: one more"


async def test_a_borrowed_pool_stays_open_after_close(postgres_dsn: str, pg_schema: str) -> None:
    async with asyncpg.create_pool(postgres_dsn, min_size=1, max_size=2) as pool:
        driver = postgres_job_driver(pool, schema=pg_schema)
        await driver.enqueue(send("borrowed"))
        await driver.close()
        assert await pool.fetchval("SELECT 1") == 1
