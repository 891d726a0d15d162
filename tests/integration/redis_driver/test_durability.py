"""Durability is the server's: with the append-only file and ``appendfsync always``, every
write the driver was answered for survives a SIGKILL of redis-server."""

from __future__ import annotations

import asyncio

from redis.exceptions import ConnectionError as RedisConnectionError
from redis_server import RedisServer

from ferry._clock import FrozenClock
from ferry.drivers import redis_job_driver
from ferry.drivers.protocol import AckOptions, ClaimOptions, EnqueueRequest, RunFilter


def send(key: str) -> EnqueueRequest:
    return EnqueueRequest("send", "default", {"key": key}, key, 3)


async def test_acknowledged_writes_survive_a_kill_of_the_server(
    private_server: RedisServer, clock: FrozenClock
) -> None:
    driver = redis_job_driver(private_server.url, clock=clock)
    try:
        results = await driver.enqueue_many([send(f"k{n}") for n in range(10)])
        claimed = await driver.claim(ClaimOptions("w", 60_000, limit=3))
        assert await driver.settle_many([(claimed[0].id, AckOptions("w", {"ok": 1}))]) == [True]

        await asyncio.to_thread(private_server.kill)
        await asyncio.to_thread(private_server.start)

        for _ in range(3):  # the first command after the restart may meet the dead socket
            try:
                runs = await driver.introspect.list_runs(RunFilter(limit=100))
                break
            except RedisConnectionError:
                continue
        states = sorted(run.state for run in runs)
        assert states == ["completed"] + ["queued"] * 7 + ["running"] * 2
        again = await driver.enqueue(send("k0"))
        assert (again.job_id, again.deduplicated) == (results[0].job_id, True)
        done = await driver.introspect.get_run(claimed[0].id)
        assert done is not None and done.result == {"ok": 1}
        assert await driver.ack(claimed[1].id, AckOptions("w")), "its lease survived too"
    finally:
        await driver.close()
