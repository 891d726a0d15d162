"""Several drivers on one file — each with its own connections and threads, as separate
processes have — share one queue: the file's write lock is the fence."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from ferry import FerryError
from ferry.drivers import SqliteJobDriver
from ferry.drivers.protocol import AckOptions, ClaimOptions, EnqueueRequest, RunFilter

from .conftest import DriverFactory

RUNS = 300
DRIVERS = 4


def _requests(count: int, *, key: str | None = None, name: str = "work") -> list[EnqueueRequest]:
    return [
        EnqueueRequest(
            name=name,
            queue="default",
            payload={"n": n},
            idempotency_key=f"{name}:{n}",
            max_attempts=3,
            concurrency_key=key,
        )
        for n in range(count)
    ]


async def test_concurrent_claimers_on_one_file_claim_every_run_exactly_once(
    drivers: DriverFactory,
) -> None:
    """Budget: 300 runs, 4 drivers claiming batches of 7 and acking them at once, all
    racing. Invariant: every run is claimed once and completed; no run is claimed twice."""
    fleet = [drivers() for _ in range(DRIVERS)]
    await fleet[0].enqueue_many(_requests(RUNS))
    claimed: list[str] = []

    async def drain(driver: SqliteJobDriver, worker: str) -> None:
        while batch := await driver.claim(ClaimOptions(worker, 30_000, limit=7)):
            claimed.extend(run.id for run in batch)
            landed = await driver.settle_many([(run.id, AckOptions(worker)) for run in batch])
            assert all(landed)

    await asyncio.gather(*(drain(d, f"w{i}") for i, d in enumerate(fleet)))
    assert len(claimed) == RUNS and len(set(claimed)) == RUNS
    [stats] = await fleet[0].stats()
    assert stats.counts["completed"] == RUNS


async def test_a_slot_limit_holds_across_drivers_racing_for_it(drivers: DriverFactory) -> None:
    fleet = [drivers() for _ in range(DRIVERS)]
    for round_ in range(5):
        leases = [d.slots for d in fleet]
        won = await asyncio.gather(
            *(
                lease.acquire(f"k{round_}", holder=f"h{i}", limit=2, ttl_ms=60_000)
                for i, lease in enumerate(leases)
            )
        )
        assert sum(won) == 2, won
        assert len(await fleet[0].slots.holders(f"k{round_}")) == 2


async def test_claims_racing_for_a_limit_one_key_take_its_slot_once(
    drivers: DriverFactory,
) -> None:
    fleet = [drivers() for _ in range(DRIVERS)]
    await fleet[0].enqueue_many(_requests(20, key="keyed:acct-1", name="keyed"))
    limits = {"keyed": 1}
    batches = await asyncio.gather(
        *(
            d.claim(ClaimOptions(f"w{i}", 30_000, limit=5, limits=limits))
            for i, d in enumerate(fleet)
        )
    )
    [winner] = [i for i, batch in enumerate(batches) if batch]
    [only] = batches[winner]
    assert only.slot_held and sum(len(batch) for batch in batches) == 1
    assert await fleet[1].slots.holders("keyed:acct-1") == [only.id]
    # Its settle releases the slot in the same transaction: the next claim gets the key.
    assert await fleet[2].ack(only.id, AckOptions(f"w{winner}"))
    [following] = await fleet[3].claim(ClaimOptions("w9", 30_000, limit=5, limits=limits))
    assert following.id != only.id


async def test_a_write_lock_held_past_the_busy_timeout_is_x_db_busy_and_loses_nothing(
    drivers: DriverFactory, db_path: Path
) -> None:
    driver = drivers(busy_timeout_ms=200)
    await driver.enqueue_many(_requests(1))
    application = sqlite3.connect(db_path, isolation_level=None)
    try:
        application.execute("BEGIN IMMEDIATE")  # an application transaction left open
        with pytest.raises(FerryError) as enqueue:
            await driver.enqueue_many(_requests(3))
        with pytest.raises(FerryError) as claim:
            await driver.claim(ClaimOptions("w1", 30_000, limit=5))
        # Readers never wait for the writer in WAL mode: introspection still answers.
        assert len(await driver.introspect.list_runs(RunFilter())) == 1
    finally:
        application.execute("ROLLBACK")
        application.close()
    for refused in (enqueue.value, claim.value):
        assert refused.code == "X_DB_BUSY"
        assert str(db_path) in refused.message and "200 ms" in refused.message
    assert len(await driver.enqueue_many(_requests(3))) == 3
    [stats] = await driver.stats()
    assert stats.counts["queued"] == 3, "the refused enqueue wrote nothing; the retry wrote all"
    assert len(await driver.claim(ClaimOptions("w1", 30_000, limit=5))) == 3
