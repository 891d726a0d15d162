"""Durability is the server's: with the append-only file and ``appendfsync always``, every
write the driver was answered for survives a SIGKILL of redis-server."""

from __future__ import annotations

import asyncio

from support.redis_server import RedisServer, as_a_role_would
from support.runs import send

from ferry.drivers import RedisJobDriver
from ferry.drivers.protocol import AckOptions, ClaimOptions, RunFilter


async def test_acknowledged_writes_survive_a_kill_of_the_server(
    private_server: RedisServer, private_driver: RedisJobDriver
) -> None:
    results = await private_driver.enqueue_many([send(f"k{n}") for n in range(10)])
    claimed = await private_driver.claim(ClaimOptions("w", 60_000, limit=3))
    assert await private_driver.settle_many([(claimed[0].id, AckOptions("w", {"ok": 1}))]) == [True]

    await asyncio.to_thread(private_server.kill)
    await asyncio.to_thread(private_server.start)

    runs = await as_a_role_would(lambda: private_driver.introspect.list_runs(RunFilter(limit=100)))
    states = sorted(run.state for run in runs)
    assert states == ["completed"] + ["queued"] * 7 + ["running"] * 2
    again = await private_driver.enqueue(send("k0"))
    assert (again.job_id, again.deduplicated) == (results[0].job_id, True)
    done = await private_driver.introspect.get_run(claimed[0].id)
    assert done is not None and done.result == {"ok": 1}
    assert await private_driver.ack(claimed[1].id, AckOptions("w")), "its lease survived too"
