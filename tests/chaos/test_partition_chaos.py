"""A partition between one worker and its store, past its lease, on every durable driver:
the fenced worker counts every lease that lapsed, once; a verdict it reached after its
window closed is never sent, and one already on its way is refused by the fence and
counted ``superseded`` — never ``completed``; and the fleet's ``completed`` equals the runs
completed in the store.

PostgreSQL and Redis: worker A reaches the store through a TCP proxy the test cuts (every
byte held, none lost) while worker B, connected directly, takes the lapsed runs over and
completes everything; then the proxy heals and A's held statements arrive, late. SQLite
has no network to cut: the honest equivalent is another connection holding the file's
write lock past the lease — A's renewals and settles wait behind it (a busy timeout longer
than the lock), and those sent reach the file once it is released, after their leases
expired.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.processes import FerryProcess, Fleet
from support.tcp_proxy import TcpProxy, proxied, upstream_of
from support.waiting import eventually
from worker import app

from ferry._jobs.facade import enqueue_many
from ferry.drivers import PostgresJobDriver, RedisJobDriver, SqliteJobDriver
from ferry.drivers.protocol import JobDriver, RunFilter

RUNS = 48
NAP_MS = 500
CONCURRENCY = 4
LEASE_S = 2.0
REDIS_REPLY_TIMEOUT_S = 120
"""Longer than the partition, so A's client waits for its late replies."""
SQLITE_BUSY_TIMEOUT_MS = 120_000
"""Longer than the lock: A's writes wait it out instead of failing, and land after it."""


@dataclass
class Partition:
    """How worker A reaches the store, and how the test cuts it off and heals it."""

    url: str
    """A's ``--database-url``."""
    blocks_everyone: bool
    """The cut stops every process (SQLite's lock), so the takeover waits for the heal."""
    proxy: TcpProxy | None = None
    lock_path: Path | None = None
    _lock: sqlite3.Connection | None = field(default=None, repr=False)

    async def cut(self) -> None:
        if self.proxy is not None:
            self.proxy.cut()
            return
        assert self.lock_path is not None
        lock = sqlite3.connect(
            self.lock_path, isolation_level=None, timeout=60, check_same_thread=False
        )
        await asyncio.to_thread(lock.execute, "BEGIN IMMEDIATE")  # waits out A's own write
        self._lock = lock

    async def heal(self) -> None:
        if self.proxy is not None:
            self.proxy.heal()
        elif self._lock is not None:
            lock, self._lock = self._lock, None
            lock.execute("ROLLBACK")
            lock.close()

    async def close(self) -> None:
        await self.heal()
        if self.proxy is not None:
            self.proxy.close()


@pytest.fixture
async def partition(
    driver: JobDriver, postgres_dsn: str, redis_url: str
) -> AsyncIterator[Partition]:
    if isinstance(driver, SqliteJobDriver):
        made = Partition(
            f"sqlite:///{driver.path}?busy_timeout_ms={SQLITE_BUSY_TIMEOUT_MS}",
            blocks_everyone=True,
            lock_path=driver.path,
        )
    else:
        assert isinstance(driver, PostgresJobDriver | RedisJobDriver)
        store = postgres_dsn if isinstance(driver, PostgresJobDriver) else redis_url
        proxy = TcpProxy(upstream_of(store))
        url = proxied(store, proxy)
        if isinstance(driver, RedisJobDriver):
            # redis-py gives up on a reply after 5 s by default: a settle answered later
            # than its client waits is counted unsettled, not superseded. Wait longer here.
            url += f"?socket_timeout={REDIS_REPLY_TIMEOUT_S}"
        made = Partition(url, blocks_everyone=False, proxy=proxy)
    yield made
    await made.close()


async def runs_of(node: FerryProcess, outcome: str) -> float:
    value = await node.metric("job_runs_total", queue="default", job="nap", outcome=outcome)
    return value or 0.0


async def leases_lost(node: FerryProcess) -> float:
    return await node.metric("job_leases_lost_total", queue="default") or 0.0


async def held_by(driver: JobDriver, worker: str) -> list[str]:
    """The runs ``worker`` holds in the store now (running under its lease, lapsed or not)."""
    running = await driver.introspect.list_runs(RunFilter(state="running", limit=RUNS + 1))
    details = [await driver.introspect.get_run(r.id) for r in running]
    return [d.summary.id for d in details if d is not None and d.locked_by == worker]


async def in_flight(node: FerryProcess) -> float:
    return await node.metric("job_runs_in_flight") or 0.0


async def test_a_partitioned_worker_counts_each_lapsed_lease_once_and_completes_none_of_them(
    driver: JobDriver, fleet: Fleet, partition: Partition
) -> None:
    """Budget: 48 runs of a 500 ms body that ignores its signal; worker A (concurrency 4,
    lease 2 s) cut off from the store once it is under way, for as long as it takes the
    fleet to take its runs over; worker B (concurrency 4) connected throughout (SQLite:
    started once the lock is released).

    Invariants: every run completes; the fleet's ``completed`` equals the store's; every
    extra attempt in the store is one lease of A's that lapsed, and A counted each once
    (B none); A may count more — a window closed on A's clock while its settle was in
    flight, the settle then landing late with nobody else having run the run; each lapsed
    run of A ended ``superseded`` (a settle sent in its window and refused late, logged
    ``jobs.lease.lost`` with who holds the run now) or ``lease-lost`` (its verdict reached
    after the window closed and not sent, abandoned unsettled, or a claim that answered
    after its lease lapsed, its body never started); no task failure was left to asyncio.
    Whether any settle was on its way as the cut fell is the partition's timing: the
    conformance suite's fenced tests make sure of that case on every driver."""
    json_logs = ["--log-format", "json"]
    a = await fleet.worker(
        lease_seconds=LEASE_S,
        concurrency=CONCURRENCY,
        extra=["--database-url", partition.url, *json_logs],
    )
    await enqueue_many(app.nap.definition, [{"key": f"n{n}", "ms": NAP_MS} for n in range(RUNS)])

    async def a_busy() -> bool:
        return await runs_of(a, "completed") >= CONCURRENCY and await in_flight(a) > 0

    await eventually(a_busy, what="worker A under way", context=fleet.logs)
    b: FerryProcess | None = None
    if not partition.blocks_everyone:
        b = await fleet.worker(lease_seconds=LEASE_S, concurrency=CONCURRENCY, extra=json_logs)
    await partition.cut()
    started = time.monotonic()

    async def all_completed() -> bool:
        [stats] = await driver.stats()
        return stats.counts.get("completed", 0) == RUNS

    if partition.blocks_everyone:
        # Held until A has counted the lapse of every run it holds in the file (the lock
        # stops writers only: the test still reads), then released: A's settles already
        # on their way reach the file after their leases expired.
        a_held = set(await held_by(driver, a.worker_id))
        assert a_held, "A held runs when it was cut off"

        def a_lost_all() -> bool:
            return a_held <= {line["job_id"] for line in a.events("jobs.lease.lost")}

        await eventually(a_lost_all, what="A's leases to lapse behind the lock", context=fleet.logs)
        await partition.heal()
        b = await fleet.worker(lease_seconds=LEASE_S, concurrency=CONCURRENCY, extra=json_logs)
    else:
        # Held until B has taken over every run A held, so each late settle of A meets B's
        # lease (or B's completion) at the fence.
        a_held = set(await held_by(driver, a.worker_id))
        assert a_held, "A held runs when it was cut off"

        async def taken_over() -> bool:
            # A claim of A's already on its way as the cut fell may reach the store after
            # the first look: every run seen held by A joins the set, so its late settle
            # too meets B at the fence (and A's own next claim cannot take it back).
            a_held.update(await held_by(driver, a.worker_id))
            # B holds or finished each: on Postgres a lapsed lease first goes back in the
            # queue (the fleet's tending turn), where B's next claim takes it.
            for run_id in a_held:
                run = await driver.introspect.get_run(run_id)
                if run is None or run.summary.state == "completed":
                    continue
                if run.summary.state != "running" or run.locked_by in (a.worker_id, None):
                    return False
            return True

        await eventually(
            taken_over, within_s=60, what="B to take A's runs over", context=fleet.logs
        )
        await partition.heal()
    print(f"{driver.name}: A cut off for {time.monotonic() - started:.1f} s")
    assert b is not None
    await eventually(all_completed, within_s=120, what="every run completed", context=fleet.logs)

    async def a_settled_everything() -> bool:
        return await in_flight(a) == 0

    await eventually(a_settled_everything, within_s=60, what="A to end every attempt it held")

    runs = await driver.introspect.list_runs(RunFilter(limit=RUNS + 1))
    assert len(runs) == RUNS and {r.state for r in runs} == {"completed"}
    lapsed = sum(r.attempts - 1 for r in runs)
    completed = await runs_of(a, "completed") + await runs_of(b, "completed")
    superseded, unsettled = await runs_of(a, "superseded"), await runs_of(a, "lease-lost")
    counted = [line for line in a.events("jobs.lease.lost") if line["counted"]]
    # A lease is lost on A's clock: one whose window closed while its settle was in flight
    # is counted even when that settle then lands (a slow answer, not a refused one) and
    # nobody runs it again. Every other lapse is a run taken over: one more attempt.
    attempts = {r.id: r.attempts for r in runs}
    taken_over = [line for line in counted if line["attempt"] < attempts[line["job_id"]]]
    print(
        f"{driver.name}: {lapsed} leases lapsed, A counted {await leases_lost(a):.0f} "
        f"({len(taken_over)} taken over, the rest settled late by A); "
        f"{superseded:.0f} settles refused (superseded), {unsettled:.0f} unsent (lease-lost); "
        f"completed A {await runs_of(a, 'completed'):.0f} + B {await runs_of(b, 'completed'):.0f}"
    )
    assert completed == RUNS, "the fleet's completed is the store's: no refused settle among them"
    assert lapsed >= 1, "the partition outlasted a lease"
    assert len({(line["job_id"], line["attempt"]) for line in counted}) == len(counted)
    assert await leases_lost(a) == len(counted), "A counted each lapse it logged, once"
    assert len(taken_over) == lapsed, "A counted exactly the leases that lapsed"
    assert await leases_lost(b) == 0
    assert superseded + unsettled == lapsed, (
        "each lapsed attempt of A ended superseded or unsettled"
    )

    refused = [line for line in a.events("jobs.lease.lost") if line.get("refused") == "settle"]
    assert len(refused) == superseded and all(line["level"] == "error" for line in refused)
    holders = {line.get("holder") for line in refused}
    if not partition.blocks_everyone:
        assert holders <= {b.worker_id, None}, holders  # B holds it, or finished it already
    for node in (a, b):
        log = node.log()
        assert "never retrieved" not in log and "jobs.worker.execution-crashed" not in log
        assert all(json.loads(line) for line in log.splitlines() if line.startswith("{"))
