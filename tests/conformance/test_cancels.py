"""A role cancelled in the middle of a statement stops, on every driver: a worker's stop
cancels its samplers and its wake and waits for them, so a cancel a client library drops
(redis-py writes each command under Python 3.11's ``asyncio.wait_for``) would hang it."""

from __future__ import annotations

import asyncio

from ferry.drivers.protocol import JobDriver

ATTEMPTS = 60


async def test_a_loop_of_statements_cancelled_at_any_point_stops(driver: JobDriver) -> None:
    await driver.stats()  # opened: the cancels land on statements, not on the first connect

    async def sampling() -> None:
        while True:
            await driver.stats()
            await asyncio.sleep(0)

    for turns in range(ATTEMPTS):  # the cancel lands a different number of turns in each time
        task = asyncio.create_task(sampling())
        for _ in range(turns):
            await asyncio.sleep(0)
        task.cancel()
        done, _ = await asyncio.wait([task], timeout=10)
        assert done, f"a loop cancelled {turns} turns in never stopped"
        assert task.cancelled(), f"a loop cancelled {turns} turns in ended otherwise"
