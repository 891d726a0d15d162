"""(d) ferry's claim+ack latency on an empty table, then with a million completed rows;
and, in the same run, the cost of rate limits on the claim.

Each round enqueues ``batch`` jobs (untimed), then times one ``claim(limit=batch)`` and
one ``settle_many`` acking them all: two round trips, the worker's hot path. It runs on
each of ferry's durable drivers (``ferry``: Postgres, ``ferry-sqlite``: SQLite).

Rates, on the table before the completed rows go in, interleaved round by round with the
plain rounds: the same unrated rounds by a claimer that also runs a rated job
(``ClaimOptions.rates``, so the rated claim is sent), and rounds of ``batch`` rated runs
over 100 keys with room, each start checked and logged in its key's window. ``batch`` runs
of the rated job wait in the table (due in an hour) throughout, so the plain rounds are
"rated runs present, the claimer runs no rated job".
"""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import asyncpg

from bench.server import fresh_database
from bench.stats import Percentiles, percentiles
from bench.systems.ferry_sqlite_system import sqlite_file
from bench.systems.ferry_system import FerrySystem, noop, rated
from ferry import JobHandle, set_job_driver
from ferry.drivers.protocol import AckOptions, ClaimOptions, JobDriver

_WORKER_ID = "bench-claimer"
_LEASE_MS = 30_000
_WARM_UP_ROUNDS = 5
_NUMBERS = itertools.count()
"""Every round's inputs, numbered once per process: no key is enqueued twice."""

# Completed history as retention keeps it: finished a while ago, a unique key each.
# Columns are those of migration 0001; ids come from the identity column.
_RETAIN_COMPLETED = """
INSERT INTO ferry.jobs (
    name, queue, payload, idempotency_key, state, attempts, max_attempts, run_at_ms,
    result, created_at_ms, updated_at_ms, finished_at_ms
)
SELECT 'bench-noop', 'default', jsonb_build_object('n', -g, 't0', 0), 'retained:' || g,
       'completed', 1, 3, $1 - g, 'null'::jsonb, $1 - g, $1 - g, $1 - g
FROM generate_series(1, $2::bigint) AS g
"""

# The same rows in ferry_jobs of a SQLite file (migration 0001 of the SQLite driver).
_RETAIN_COMPLETED_SQLITE = """
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < :rows)
INSERT INTO ferry_jobs (
    name, queue, payload, idempotency_key, state, attempts, max_attempts, run_at_ms,
    result, created_at_ms, updated_at_ms, finished_at_ms
)
SELECT 'bench-noop', 'default', json_object('n', -n, 't0', 0), 'retained:' || n,
       'completed', 1, 3, :now - n, 'null', :now - n, :now - n, :now - n
FROM g
"""


@dataclass(frozen=True)
class ClaimLatency:
    """Claim+ack latency before and after the completed rows went in."""

    empty: Percentiles
    rated_present: Percentiles
    """Unrated rounds by a claimer that also runs a rated job, rated runs in the table."""
    rated: Percentiles
    """Rounds of rated runs, every one admitted by its key's window."""
    retained: Percentiles
    retained_rows: int
    insert_seconds: float


async def claim_latency(
    system: FerrySystem, server_dsn: str, *, retained: int, samples: int, batch: int
) -> ClaimLatency:
    """On a fresh database: measure, insert ``retained`` completed rows, measure again."""
    retain = _RETAIN[system.name]
    async with fresh_database(server_dsn, "ferry_claim") as dsn:
        driver = system.driver(dsn)
        await driver.open()
        previous = set_job_driver(driver)
        try:
            rounds = _Rounds(driver, batch)
            for n in range(1, batch + 1):  # present, due in an hour
                await rated.enqueue({"n": -n, "t0": 0.0}, delay="1h")
            # Interleaved round by round, so load from elsewhere lands on all three alike.
            empty, rated_present, rated_rounds = await _interleaved(
                [
                    rounds,
                    _Rounds(driver, batch, rates=True),
                    _Rounds(driver, batch, rates=True, job=rated),
                ],
                samples,
            )
            started = time.perf_counter()
            await retain(dsn, retained, driver.clock.now_ms() - 60_000)
            inserted = time.perf_counter() - started
            full = await rounds.measure(samples)
        finally:
            set_job_driver(previous)
            await driver.close()
    return ClaimLatency(empty, rated_present, rated_rounds, full, retained, inserted)


async def _retain_postgres(dsn: str, rows: int, finished_ms: int) -> None:
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(_RETAIN_COMPLETED, finished_ms, rows)
        # What autovacuum does to rows this old: visibility map and planner statistics.
        await connection.execute("VACUUM ANALYZE ferry.jobs")
    finally:
        await connection.close()


async def _retain_sqlite(dsn: str, rows: int, finished_ms: int) -> None:
    def insert() -> None:
        connection = sqlite3.connect(sqlite_file(dsn), timeout=60)
        try:
            with connection:
                connection.execute(_RETAIN_COMPLETED_SQLITE, {"rows": rows, "now": finished_ms})
            connection.execute("ANALYZE")  # the planner statistics, as on Postgres
        finally:
            connection.close()

    await asyncio.to_thread(insert)


_RETAIN: dict[str, Callable[[str, int, int], Awaitable[None]]] = {
    "ferry": _retain_postgres,
    "ferry-sqlite": _retain_sqlite,
    "ferry-sqlite-normal": _retain_sqlite,
}


async def _interleaved(kinds: list[_Rounds], samples: int) -> list[Percentiles]:
    """``samples`` timed rounds of each kind, taking turns, after a few untimed ones."""
    timed: list[list[float]] = [[] for _ in kinds]
    for _ in range(_WARM_UP_ROUNDS):
        for kind in kinds:
            await kind.round()
    for _ in range(samples):
        for kind, times in zip(kinds, timed, strict=True):
            times.append(await kind.round())
    return [percentiles(times) for times in timed]


class _Rounds:
    """Timed claim+ack rounds of ``batch`` jobs on one driver."""

    def __init__(
        self,
        driver: JobDriver,
        batch: int,
        *,
        rates: bool = False,
        job: JobHandle[Any, Any] = noop,
    ) -> None:
        self._driver = driver
        self._batch = batch
        self._job = job
        self._rates = (
            {rated.name: (rated.rate.limit, rated.rate.per_ms)} if rates and rated.rate else {}
        )

    async def measure(self, samples: int) -> Percentiles:
        """``samples`` timed rounds after a few untimed ones."""
        for _ in range(_WARM_UP_ROUNDS):
            await self.round()
        return percentiles([await self.round() for _ in range(samples)])

    async def round(self) -> float:
        await self._job.enqueue_many([{"n": next(_NUMBERS), "t0": 0.0} for _ in range(self._batch)])
        started = time.perf_counter()
        claimed = await self._driver.claim(
            ClaimOptions(
                worker_id=_WORKER_ID, lease_ms=_LEASE_MS, limit=self._batch, rates=self._rates
            )
        )
        landed = await self._driver.settle_many(
            [(run.id, AckOptions(worker_id=_WORKER_ID)) for run in claimed]
        )
        elapsed_ms = (time.perf_counter() - started) * 1000
        if len(claimed) != self._batch or not all(landed):
            raise RuntimeError(f"claimed {len(claimed)} of {self._batch}, acked {sum(landed)}")
        return elapsed_ms
