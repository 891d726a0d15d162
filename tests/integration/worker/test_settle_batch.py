"""Group commit of settles: a burst of acks lands in few statements, each answered right."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ferry._clock import FrozenClock
from ferry._worker.settle_queue import SettleQueue
from ferry.drivers import postgres_job_driver
from ferry.drivers.protocol import AckOptions, ClaimOptions, EnqueueRequest, NackOptions, Settle


async def test_a_burst_of_settles_rides_in_few_statements_and_each_answer_is_its_own(
    postgres_dsn: str, pg_schema: str
) -> None:
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, clock=FrozenClock())
    try:
        await driver.enqueue_many(
            [EnqueueRequest("batch.job", "default", {"n": n}, f"k{n}", 3) for n in range(40)]
        )
        claimed = await driver.claim(ClaimOptions("w1", 30_000, limit=40))
        statements: list[int] = []

        async def counted(settles: Sequence[Settle]) -> list[bool]:
            statements.append(len(settles))
            return await driver.settle_many(settles)

        queue = SettleQueue()
        lone = asyncio.ensure_future(queue.ack(claimed[0].id, AckOptions("w1")))
        await asyncio.sleep(0)  # the run submits its verdict ...
        await queue.flush(counted)  # ... and the next round trip carries it alone
        assert await lone is True and statements == [1], "a lone settle goes out at once"
        answers = asyncio.gather(
            *[queue.ack(run.id, AckOptions("w1")) for run in claimed[1:30]],
            *[queue.nack(run.id, NackOptions("w1", "retry")) for run in claimed[30:]],
            queue.ack(claimed[0].id, AckOptions("w1")),  # already settled: must answer False
        )
        await asyncio.sleep(0)  # every run of the burst submits before the next round trip
        await queue.flush(counted)
        assert await answers == [True] * 39 + [False]
        assert sum(statements[1:]) == 40 and len(statements) <= 3
        stats = {s.queue: s for s in await driver.stats()}["default"].counts
        assert (stats["completed"], stats["queued"]) == (30, 10)
    finally:
        await driver.close()
