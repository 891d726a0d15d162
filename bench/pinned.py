"""(g) A pinned xmin horizon: a steady stream of jobs while a transaction holds back vacuum.

A long REPEATABLE READ transaction (a lagging replica slot, a forgotten ``BEGIN`` in a
shell) keeps every row version younger than its snapshot: autovacuum cannot reclaim the
versions a queue's claims and settles leave behind, and a claim that walks them gets
slower the longer the pin lasts. One worker process of the system (its default settings,
its claim statements timed) serves jobs enqueued at ``rate`` per second: first unpinned
(``warm_s``), then for ``pinned_s`` with another session holding a snapshot open, then
released (``after_s``). Reported: claim p50/p99 unpinned and pinned, jobs started per
second while pinned, and the dead tuples of the system's tables (``pg_stat_user_tables``)
when the pin starts, when it ends, and ``after_s`` after its release.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass

import asyncpg

from bench.server import fresh_database
from bench.stats import Percentiles, percentiles
from bench.systems import Producer, System
from bench.workloads import WorkerProcess

_TICK_S = 0.05
_DEAD_TUPLES = "SELECT coalesce(sum(n_dead_tup), 0)::bigint FROM pg_stat_user_tables"
_WORKER_GRACE_S = 15.0


@dataclass(frozen=True)
class Pinned:
    """What one system did under the pin."""

    rate: float
    """Jobs enqueued per second (the target throughput)."""
    unpinned: Percentiles
    pinned: Percentiles
    """Claim statement durations, in ms, before and during the pin."""
    pinned_throughput: float
    """Bodies started per second while the pin held."""
    dead_start: int
    dead_end: int
    dead_after: int
    pinned_s: float


async def pinned_horizon(
    system: System,
    server_dsn: str,
    *,
    rate: float,
    warm_s: float,
    pinned_s: float,
    after_s: float,
) -> Pinned:
    """Run the workload on a fresh database of ``system``."""
    total_s = warm_s + pinned_s + after_s
    async with fresh_database(server_dsn, system.name) as dsn:
        await system.install(dsn)
        producer = await system.producer(dsn)
        observer = await asyncpg.connect(dsn)
        pin = await asyncpg.connect(dsn)
        numbers = itertools.count()
        try:
            worker = WorkerProcess(system, dsn, "steady", 0, None, None, total_s)
            await worker.start()
            started = time.time()
            await _steady(producer, numbers, rate, until=started + warm_s)
            pin_tx = pin.transaction(isolation="repeatable_read")
            await pin_tx.start()
            await pin.fetchval("SELECT count(*) FROM pg_class")  # takes the snapshot
            pinned_at = time.time()
            dead_start = await observer.fetchval(_DEAD_TUPLES)
            await _steady(producer, numbers, rate, until=pinned_at + pinned_s)
            dead_end = await observer.fetchval(_DEAD_TUPLES)
            await pin_tx.rollback()
            released_at = time.time()
            await _steady(producer, numbers, rate, until=released_at + after_s)
            dead_after = await observer.fetchval(_DEAD_TUPLES)
            result = await worker.result()
        finally:
            await pin.close()
            await observer.close()
            await producer.close()
    claims = [(float(at), float(s) * 1000) for at, s in result["claims"]]
    bodies = [float(at) for at in result["bodies"]]
    # The first third of the warm-up is start-up (connections, prepared statements).
    unpinned = [ms for at, ms in claims if started + warm_s / 3 <= at < pinned_at]
    pinned = [ms for at, ms in claims if pinned_at <= at < released_at]
    started_pinned = sum(1 for at in bodies if pinned_at <= at < released_at)
    return Pinned(
        rate=rate,
        unpinned=percentiles(unpinned),
        pinned=percentiles(pinned),
        pinned_throughput=started_pinned / (released_at - pinned_at),
        dead_start=int(dead_start),
        dead_end=int(dead_end),
        dead_after=int(dead_after),
        pinned_s=released_at - pinned_at,
    )


async def _steady(
    producer: Producer, numbers: itertools.count[int], rate: float, *, until: float
) -> None:
    """Enqueue ``rate`` jobs a second, a batch every tick, until the wall clock reaches
    ``until``."""
    per_tick = max(1, round(rate * _TICK_S))
    tick = time.time()
    while tick < until:
        await producer.enqueue_batch(
            [{"n": next(numbers), "t0": time.time()} for _ in range(per_tick)]
        )
        tick += per_tick / rate
        await asyncio.sleep(max(0.0, tick - time.time()))
