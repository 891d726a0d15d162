"""PostgreSQL fails over to its standby, then switches back, under load: every role
reconnects to the new primary without a restart, leases and the leader lease recover, and
nothing committed is lost.

The fleet — two workers, two schedulers, a relay — and the test's own producers run on one
multi-host URL (``postgresql://p,s/db?target_session_attrs=read-write``). Replication is
synchronous, as a failover that must lose nothing committed needs: a commit is
acknowledged once the standby has it.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import pytest
from support.pg_cluster import PgNode, multi_host_dsn
from support.processes import FerryProcess, Fleet
from support.tcp_proxy import TcpProxy
from support.waiting import eventually
from worker import app
from worker.conftest import app_installed

from ferry._jobs.facade import enqueue_many
from ferry._scheduler.store import SchedulerStore
from ferry.drivers import PostgresJobDriver, postgres_job_driver

SCHEMA = "ferry_failover"
LEASE_S = 3.0
"""The workers' and the schedulers' lease: a run held across the outage keeps it if the
new primary answers within it."""
RECOVERY_BOUND_S = 90.0
"""How long the fleet may take to recover (a guard against a hang, not a timing claim)."""


@dataclass
class Cluster:
    """Two nodes, each reached by its clients through a proxy: the network to its host,
    which the test can cut (replication between the nodes goes direct)."""

    primary: PgNode
    standby: PgNode
    network: dict[str, TcpProxy]
    """Node name -> the proxy its clients reach it through."""
    leader: PgNode
    """The node that accepts writes now (the test moves it): where the test reads, and
    where the application's own connection writes its outbox entries."""

    @property
    def dsn(self) -> str:
        """The fleet's URL: both hosts, whichever accepts writes, each host given 2 s to
        answer and each statement 5 s (``connect_timeout``, ``command_timeout``)."""
        hosts = (f"{proxy.host}:{proxy.port}" for proxy in self.network.values())
        return multi_host_dsn(*hosts) + "&connect_timeout=2&command_timeout=5"


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    """A primary streaming synchronously to a standby, both on loopback ports.

    Their data lives outside pytest's temporary tree: another pytest session on the machine
    resets that tree's root to owner-only, which the servers' own user must traverse."""
    base = Path(tempfile.mkdtemp(prefix="ferry-failover-"))
    primary, standby = PgNode("p", base / "p"), PgNode("s", base / "s")
    network = {
        node.name: TcpProxy((socket.AF_INET, ("127.0.0.1", node.port)))
        for node in (primary, standby)
    }
    try:
        primary.init_primary()
        standby.clone_standby_of(primary)
        primary.synchronous_standby()
        yield Cluster(primary, standby, network, leader=primary)
    finally:
        for proxy in network.values():
            proxy.close()
        for node in (primary, standby):
            node.stop_quietly()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
async def queue(
    cluster: Cluster, postgres_dsn: str, pg_schema: str
) -> AsyncIterator[PostgresJobDriver]:
    """The test's own driver on the multi-host URL (its producers ride the failover too),
    installed as the job driver; the app's effect rows on the session's server."""
    driver = postgres_job_driver(cluster.dsn, schema=SCHEMA)
    await driver.open()
    async with app_installed(driver, postgres_dsn, pg_schema):
        yield driver
    await driver.close()


@dataclass
class Producers:
    """Runs enqueued directly and through the outbox, each key kept once acknowledged."""

    cluster: Cluster
    driver: PostgresJobDriver
    acked: dict[str, float] = field(default_factory=dict)
    """Key -> when its enqueue (or outbox commit) was acknowledged (monotonic)."""
    refused: int = 0
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def enqueue_forever(self) -> None:
        n = 0
        while not self.stop.is_set():
            batch = [{"key": f"e{n + i}", "step_ms": [20, 20]} for i in range(4)]
            try:
                await enqueue_many(app.chain.definition, batch)
            except Exception:  # the primary is gone: the same keys again (they dedupe)
                self.refused += 1
                await asyncio.sleep(0.2)
                continue
            self.acked.update((item["key"], time.monotonic()) for item in batch)
            n += len(batch)
            await asyncio.sleep(0.1)

    async def append_forever(self) -> None:
        n = 0
        while not self.stop.is_set():
            key = f"o{n}"
            try:
                connection = await asyncpg.connect(self.cluster.leader.dsn, timeout=5)
                try:
                    async with connection.transaction():
                        payload = {"key": key, "step_ms": [20]}
                        await self.driver.outbox.append("chain", payload, connection=connection)
                finally:
                    await connection.close()
            except Exception:
                self.refused += 1
                await asyncio.sleep(0.2)
                continue
            self.acked[key] = time.monotonic()
            n += 1
            await asyncio.sleep(0.2)


@dataclass
class Roles:
    workers: list[FerryProcess]
    schedulers: list[FerryProcess]
    relay: FerryProcess

    @property
    def every(self) -> list[FerryProcess]:
        return [*self.workers, *self.schedulers, self.relay]


async def chain_runs(cluster: Cluster) -> dict[str, tuple[str, int]]:
    """Every run of ``chain`` on the primary: key -> (state, attempts)."""
    connection = await asyncpg.connect(cluster.leader.dsn, timeout=5)
    try:
        rows = await connection.fetch(
            f"SELECT idempotency_key, state, attempts FROM {SCHEMA}.jobs WHERE name = 'chain'"
        )
    finally:
        await connection.close()
    return {r["idempotency_key"].removeprefix("chain:"): (r["state"], r["attempts"]) for r in rows}


async def first_completion_after(cluster: Cluster, since_ms: int) -> int | None:
    """When the first run of ``chain`` finished after ``since_ms`` (epoch ms), if one has."""
    connection = await asyncpg.connect(cluster.leader.dsn, timeout=5)
    try:
        finished: int | None = await connection.fetchval(
            f"SELECT min(finished_at_ms) FROM {SCHEMA}.jobs "
            "WHERE name = 'chain' AND state = 'completed' AND finished_at_ms > $1",
            since_ms,
        )
    finally:
        await connection.close()
    return finished


Check = Callable[[], Awaitable[bool]]
_DOWN = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError)
"""What a read of the cluster raises while no primary answers."""


async def first_steps_after(
    effects: asyncpg.Connection, schema: str, since_ms: int
) -> dict[str, int]:
    """When each worker first ran a step after ``since_ms`` (epoch ms), by worker id."""
    rows = await effects.fetch(
        "SELECT worker, (extract(epoch FROM min(at)) * 1000)::bigint AS first "
        f'FROM "{schema}".effects WHERE at > to_timestamp($1 / 1000.0) GROUP BY worker',
        since_ms,
    )
    return {row["worker"]: row["first"] for row in rows}


async def recovered(
    cluster: Cluster,
    driver: PostgresJobDriver,
    roles: Roles,
    producers: Producers,
    effects: tuple[asyncpg.Connection, str],
    *,
    lost_at_ms: int,
    promoted_at_ms: int,
    listening_before: list[int],
) -> dict[str, float]:
    """Wait until every role works on the new primary; answers when each was seen to, in
    seconds after the primary was lost: ``runs`` when the first run finished on the new
    primary and ``every worker`` when the last worker ran a step there (per the rows);
    the others when the test saw them. ``listening_before``: each worker's count of LISTEN
    sessions opened before the loss."""
    lost_at = time.monotonic() - (driver.clock.now_ms() - lost_at_ms) / 1000
    seen: dict[str, float] = {}
    worker_ids = [w.worker_id for w in roles.workers]

    async def runs_complete() -> bool:
        first = await first_completion_after(cluster, promoted_at_ms)
        if first is not None:
            seen["runs"] = (first - lost_at_ms) / 1000
        return first is not None

    async def every_worker() -> bool:
        first = await first_steps_after(*effects, promoted_at_ms)
        if not all(w in first for w in worker_ids):
            return False
        seen["every worker"] = (max(first[w] for w in worker_ids) - lost_at_ms) / 1000
        return True

    async def wakes_back() -> bool:
        return all(
            [
                len(w.events("jobs.wake.listening")) > before
                and await w.metric("job_wake_listener_healthy") == 1
                for w, before in zip(roles.workers, listening_before, strict=True)
            ]
        )

    async def relay_back() -> bool:
        appended = [k for k, at in producers.acked.items() if k[0] == "o" and at > lost_at]
        return (
            bool(appended) and (await chain_runs(cluster)).get(appended[0], ("",))[0] == "completed"
        )

    async def leader_back() -> bool:
        lease = await SchedulerStore(driver).leader(now_ms=driver.clock.now_ms())
        renewed = lease is not None and lease.expires_at_ms - LEASE_S * 1000 > lost_at_ms
        leaders = [await s.metric("job_scheduler_leader") for s in roles.schedulers]
        return renewed and sorted(leaders) == [0.0, 1.0]

    async def wait(what: str, check: Check) -> None:
        async def answered() -> bool:
            try:
                done = await check()
            except _DOWN:
                return False
            if done:  # when the test saw it, unless the rows said when it happened
                seen.setdefault(what, time.monotonic() - lost_at)
            return done

        await eventually(answered, within_s=RECOVERY_BOUND_S, what=what)

    await asyncio.gather(
        wait("runs", runs_complete),
        wait("every worker", every_worker),
        wait("LISTEN", wakes_back),
        wait("relay", relay_back),
        wait("leader", leader_back),
    )
    return seen


@pytest.mark.parametrize("primary_lost", ["stopped", "unreachable"])
async def test_the_fleet_survives_a_failover_and_a_switchover_losing_nothing(
    primary_lost: str,
    cluster: Cluster,
    queue: PostgresJobDriver,
    db: asyncpg.Connection,
    postgres_dsn: str,
    pg_schema: str,
    tmp_path: Path,
) -> None:
    """Budget: two workers (concurrency 8, lease 3 s), two schedulers (tick 0.2 s, lease
    3 s) and a relay on the multi-host URL; the test enqueues 4 runs every 100 ms and
    commits an outbox entry every 200 ms throughout. Failover: the primary is killed
    (``pg_ctl stop -m immediate``) and the standby promoted — ``stopped``: its connections
    close with it; ``unreachable``: its host drops off the network first, so every
    connection to it, open or new, hangs unanswered (a machine that lost power).
    Switchover: the old primary is rewound into a standby of the new one (``pg_rewind``),
    the new primary stopped cleanly and the old one promoted back. Each recovery is guarded at 90 s.

    Invariants: no role restarts; after each move every worker's runs complete again on
    the new primary, its LISTEN session reconnects there, the relay publishes again and
    the leader lease is renewed there by exactly one scheduler; every run whose enqueue
    or outbox commit was acknowledged exists and completes (0 lost). Reported: the
    seconds to resume after each move, the leases counted lost, the runs re-run."""
    effects = {"EFFECTS_DATABASE_URL": postgres_dsn, "EFFECTS_SCHEMA": pg_schema}
    fleet = Fleet(cluster.dsn, SCHEMA, tmp_path, overrides=effects)
    json_logs = ["--log-format", "json"]
    producers = Producers(cluster, queue)
    producing: list[asyncio.Task[None]] = []
    try:
        workers = [
            await fleet.worker(lease_seconds=LEASE_S, concurrency=8, extra=json_logs)
            for _ in range(2)
        ]
        schedulers = [await fleet.scheduler(lease_seconds=LEASE_S) for _ in range(2)]
        relay = await fleet.relay()
        roles = Roles(workers, schedulers, relay)
        producing = [
            asyncio.create_task(producers.enqueue_forever()),
            asyncio.create_task(producers.append_forever()),
        ]

        async def completed() -> int:
            runs = await chain_runs(cluster)
            return sum(1 for state, _ in runs.values() if state == "completed")

        async def under_way(since: int) -> None:
            async def more() -> bool:
                return await completed() >= since + 40

            await eventually(more, what="the fleet working on the primary", context=fleet.logs)

        figures: dict[str, dict[str, float]] = {}
        for move in ("failover", "switchover"):
            old, new = (
                (cluster.primary, cluster.standby)
                if move == "failover"
                else (cluster.standby, cluster.primary)
            )
            if move == "switchover":
                # The old primary, back on the network and rewound, follows the new one
                # until it is promoted back.
                cluster.network["p"].heal()
                await asyncio.to_thread(cluster.primary.rewind_onto, cluster.standby)
                await eventually(
                    lambda: streaming_to(cluster.standby), what="the rewound node streaming"
                )
            await under_way(await completed())
            before = (await leases_lost(workers), await reruns(cluster))
            listening = [len(w.events("jobs.wake.listening")) for w in workers]
            lost_at_ms = queue.clock.now_ms()
            started = time.monotonic()
            if move == "failover" and primary_lost == "unreachable":
                cluster.network["p"].cut()
            await asyncio.to_thread(old.stop, "immediate" if move == "failover" else "fast")
            await asyncio.to_thread(new.promote)
            cluster.leader = new
            promoted = time.monotonic() - started
            seen = await recovered(
                cluster,
                queue,
                roles,
                producers,
                (db, pg_schema),
                lost_at_ms=lost_at_ms,
                promoted_at_ms=queue.clock.now_ms(),
                listening_before=listening,
            )
            figures[move] = {
                "promoted": round(promoted, 1),
                **{what: round(at, 1) for what, at in seen.items()},
                "leases lost": await leases_lost(workers) - before[0],
                "runs re-run": await reruns(cluster) - before[1],
            }
            print(
                f"{primary_lost} {move}: "
                + ", ".join(f"{k} {v:g}" for k, v in figures[move].items())
            )
            assert all(node.running for node in roles.every), "no role restarted"

        producers.stop.set()
        await asyncio.gather(*producing)

        async def all_acked_completed() -> bool:
            runs = await chain_runs(cluster)
            return all(runs.get(key, ("",))[0] == "completed" for key in producers.acked)

        await eventually(
            all_acked_completed, within_s=RECOVERY_BOUND_S, what="every acknowledged run completed"
        )
        runs = await chain_runs(cluster)
        assert set(producers.acked) <= set(runs), "no acknowledged run is lost"
        print(
            f"{primary_lost}: {len(producers.acked)} runs acknowledged ({producers.refused} "
            f"enqueues refused and retried), 0 lost; {await leases_lost(workers):.0f} leases "
            f"counted lost, {await reruns(cluster)} runs re-run; every worker resumed "
            f"{figures['failover']['every worker']:.1f} s after the failover, "
            f"{figures['switchover']['every worker']:.1f} s after the switchover"
        )
        assert all(node.running for node in roles.every), "no role restarted"
    finally:
        producers.stop.set()
        for task in producing:
            task.cancel()
        await asyncio.gather(*producing, return_exceptions=True)
        await fleet.close()
        print(fleet.logs())


async def leases_lost(workers: list[FerryProcess]) -> float:
    return sum([await w.metric("job_leases_lost_total", queue="default") or 0 for w in workers])


async def reruns(cluster: Cluster) -> int:
    """Claims beyond each run's first: every one a run executed again (a run not yet
    claimed has none)."""
    return sum(max(attempts - 1, 0) for _, attempts in (await chain_runs(cluster)).values())


async def streaming_to(primary: PgNode) -> bool:
    connection = await asyncpg.connect(primary.dsn)
    try:
        return bool(
            await connection.fetchval(
                "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
            )
        )
    finally:
        await connection.close()
