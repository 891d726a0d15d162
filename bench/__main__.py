"""``python -m bench``: one local PostgreSQL (and Redis), three queues (ferry on three
drivers), one table.

Runs ferry (on Postgres, SQLite and Redis), pgqueuer and procrastinate on the same
workloads, each in a fresh database on the same server (ferry-sqlite: a fresh file beside
it, ferry-redis: a fresh key prefix on one local redis-server), prints the table and (for
a full run) writes it to bench/README.md.
Workloads run one after the other with the systems interleaved, so a burst of load from
elsewhere on the machine does not land on one system only. Every workload is bounded in
count and time; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import time
from collections import defaultdict
from contextlib import ExitStack

from bench import redis as redis_server
from bench.claim_latency import claim_latency
from bench.pinned import pinned_horizon
from bench.reference import raw_claim_settle
from bench.report import Results, SystemFigures, package_versions, render, write_readme
from bench.server import describe, fresh_database, local_server
from bench.sizes import FULL, QUICK, Sizes
from bench.stats import Rate, best_rate
from bench.systems import KNOWN_SYSTEMS, SYSTEM_NAMES, System, load_system
from bench.systems.ferry_sqlite_system import FOLDER as sqlite_folder
from bench.systems.ferry_system import FerrySystem
from bench.workflows import Workflows, measure_workflows
from bench.workloads import (
    end_to_end,
    enqueue_batch,
    enqueue_single,
    shared_drain,
    soak,
    wake_latency,
)


def _say(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def _in_turn(systems: list[System], run: int) -> list[System]:
    """The systems in the order run ``run`` measures them: reversed every other run."""
    return systems if run % 2 == 0 else systems[::-1]


async def measure_enqueue(
    systems: list[System], server_dsn: str, sizes: Sizes, figures: dict[str, SystemFigures]
) -> None:
    """(a) single then batch enqueue, each run in a fresh database; the best run counts."""
    single: dict[str, list[Rate]] = defaultdict(list)
    batch: dict[str, list[Rate]] = defaultdict(list)
    for run in range(sizes.enqueue_runs):
        for system in _in_turn(systems, run):
            _say(f"{system.name}: (a) enqueue, run {run + 1} of {sizes.enqueue_runs}")
            async with fresh_database(server_dsn, system.name) as dsn:
                await system.install(dsn)
                single[system.name].append(await enqueue_single(system, dsn, sizes.single))
                batch[system.name].append(
                    await enqueue_batch(
                        system, dsn, sizes.batch_total, sizes.batch, first=sizes.single
                    )
                )
    for system in systems:
        figures[system.name].single = best_rate(single[system.name])
        figures[system.name].batch = best_rate(batch[system.name])


async def measure_end_to_end(
    systems: list[System], server_dsn: str, sizes: Sizes, figures: dict[str, SystemFigures]
) -> None:
    """(b) drains of a pre-filled queue at each concurrency; the best run counts.

    Each system also drains at its best setting (``best`` below): pgqueuer at its big batch
    size with no concurrency limit, ferry at its big concurrency (its claim batch size);
    both once more on asyncio's own loop (``best-asyncio``: they run on uvloop by default).
    Then fleets: ``Sizes.shared_processes`` worker processes on one queue.
    """
    rates: dict[tuple[str, int | str], list[Rate]] = defaultdict(list)
    for run in range(sizes.end_to_end_runs):
        plans: list[tuple[System, int | None, int | None, int | str, str | None]] = [
            (s, c, None, c, None) for c in sizes.concurrencies for s in _in_turn(systems, run)
        ]
        for s in _in_turn(systems, run):
            best = {"pgqueuer": (None, sizes.pgqueuer_big_batch)}.get(
                s.name, (sizes.ferry_best_concurrency, None) if s.name == "ferry" else None
            )
            if best is not None:
                plans.append((s, *best, "best", None))
                plans.append((s, *best, "best-asyncio", "asyncio"))
        for system, concurrency, batch_size, row, loop in plans:
            settings = system.worker_settings(concurrency, batch_size)
            on = f", on {loop or system.loop}"
            _say(f"{system.name}: (b) end-to-end, {settings}{on}, run {run + 1}")
            if run == 0 and row != "best-asyncio":
                figures[system.name].settings.append(f"(b) {settings}")
            rates[system.name, row].append(
                await end_to_end(
                    system,
                    server_dsn,
                    count=sizes.end_to_end,
                    concurrency=concurrency,
                    batch_size=batch_size,
                    timeout_s=sizes.drain_timeout_s,
                    loop=loop,
                )
            )
        for processes in sizes.shared_processes:
            for system in _in_turn(systems, run):
                concurrency = sizes.shared_concurrency
                settings = system.worker_settings(concurrency, None)
                _say(f"{system.name}: (b) {processes} process(es), {settings}, run {run + 1}")
                rates[system.name, f"fleet-{processes}"].append(
                    await shared_drain(
                        system,
                        server_dsn,
                        processes=processes,
                        count=sizes.end_to_end,
                        concurrency=concurrency,
                        timeout_s=sizes.drain_timeout_s,
                    )
                )
    for (name, row), runs in rates.items():
        if row == "best":
            figures[name].best = best_rate(runs)
        elif row == "best-asyncio":
            figures[name].best_asyncio = best_rate(runs)
        elif isinstance(row, str) and row.startswith("fleet-"):
            figures[name].fleet[int(row.removeprefix("fleet-"))] = best_rate(runs)
        else:
            assert isinstance(row, int)
            figures[name].end_to_end[row] = best_rate(runs)


async def measure_soak(
    systems: list[System], server_dsn: str, sizes: Sizes, figures: dict[str, SystemFigures]
) -> None:
    """(e) a long drain per system, RSS sampled after a warm-up and at the end."""
    for system in systems:
        if system.name not in sizes.soak_systems:
            continue
        _say(f"{system.name}: (e) soak, {sizes.soak_runs:,} runs")
        figures[system.name].soak = await soak(
            system,
            server_dsn,
            warm_runs=sizes.soak_warm_runs,
            runs=sizes.soak_runs,
            concurrency=sizes.shared_concurrency,
            timeout_s=sizes.soak_timeout_s,
        )


async def measure_pinned(
    systems: list[System], server_dsn: str, sizes: Sizes, figures: dict[str, SystemFigures]
) -> None:
    """(g) a steady stream under a pinned xmin horizon, per system named for it."""
    for system in systems:
        if system.name not in sizes.pinned_systems:
            continue
        _say(
            f"{system.name}: (g) {sizes.pinned_rate:.0f} jobs/s, pinned horizon for "
            f"{sizes.pinned_s:.0f} s"
        )
        figures[system.name].pinned = await pinned_horizon(
            system,
            server_dsn,
            rate=sizes.pinned_rate,
            warm_s=sizes.pinned_warm_s,
            pinned_s=sizes.pinned_s,
            after_s=sizes.pinned_after_s,
        )


async def measure_reference(server_dsn: str, sizes: Sizes) -> Rate:
    """(f) the raw asyncpg claim+settle loop; the best of the end-to-end run count."""
    runs = []
    for run in range(sizes.end_to_end_runs):
        _say(f"reference: (f) raw asyncpg claim+settle, run {run + 1}")
        runs.append(
            await raw_claim_settle(
                server_dsn, count=sizes.reference_rows, batch=sizes.reference_batch
            )
        )
    return best_rate(runs)


async def measure_wake(
    system: System, server_dsn: str, sizes: Sizes, figures: SystemFigures
) -> None:
    """(c) enqueue→start latency on an idle worker at the system's default settings."""
    settings = system.worker_settings(None, None)
    _say(f"{system.name}: (c) enqueue→start latency, {settings}")
    figures.wake, figures.wake_complete = await wake_latency(
        system, server_dsn, samples=sizes.latency_samples, rate=sizes.latency_rate
    )
    figures.settings.append(f"(c) {settings}")


async def run(names: list[str], sizes: Sizes, *, quick: bool, write: bool) -> None:
    """Start the server, run every workload on every system, print and record the table."""
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    systems = [load_system(name) for name in names]
    figures = {name: SystemFigures() for name in names}
    redis = None
    with ExitStack() as servers:
        server_dsn = servers.enter_context(local_server())
        server = await describe(server_dsn)
        _say(f"{server.version} ({server.where}), fsync={server.fsync}")
        if "ferry-redis" in names:
            redis = redis_server.describe(servers.enter_context(redis_server.local_redis()))
            _say(redis)
        await measure_enqueue(systems, server_dsn, sizes, figures)
        await measure_end_to_end(systems, server_dsn, sizes, figures)
        reference = await measure_reference(server_dsn, sizes)
        await measure_soak(systems, server_dsn, sizes, figures)
        await measure_pinned(systems, server_dsn, sizes, figures)
        for system in systems:
            await measure_wake(system, server_dsn, sizes, figures[system.name])
        workflows: dict[str, Workflows] = {}
        for system in systems:
            if isinstance(system, FerrySystem):
                _say(
                    f"{system.name}: (h) a fan-out of {sizes.fan_out_children:,} children, "
                    f"(i) result wait latency, {sizes.result_samples} samples"
                )
                workflows[system.name] = await measure_workflows(
                    system,
                    server_dsn,
                    children=sizes.fan_out_children,
                    samples=sizes.result_samples,
                )
        claims = {}
        for system in systems:
            # (d) seeds the retained rows as SQL: the SQL drivers only.
            if isinstance(system, FerrySystem) and system.name != "ferry-redis":
                _say(
                    f"{system.name}: (d) claim latency, empty and with {sizes.retained:,} "
                    "completed rows"
                )
                claims[system.name] = await claim_latency(
                    system,
                    server_dsn,
                    retained=sizes.retained,
                    samples=sizes.claim_samples,
                    batch=sizes.claim_batch,
                )
    shutil.rmtree(sqlite_folder, ignore_errors=True)
    results = Results(
        server=server,
        sizes=sizes,
        quick=quick,
        systems=figures,
        versions=package_versions(),
        claims=claims,
        workflows=workflows,
        redis=redis,
        reference=reference,
        seconds=time.perf_counter() - started,
        load=(load_before, os.getloadavg()[0]),
    )
    block = render(results)
    print("\n" + block, flush=True)
    if write:
        write_readme(block)
        _say("wrote the table to bench/README.md")


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="small workloads for a smoke check (~1 min)"
    )
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEM_NAMES),
        help=f"comma-separated, of {','.join(KNOWN_SYSTEMS)} (default: {','.join(SYSTEM_NAMES)})",
    )
    parser.add_argument(
        "--no-readme",
        action="store_true",
        help="do not write the table to bench/README.md (only a full run of all systems does)",
    )
    args = parser.parse_args()
    names = [s for s in args.systems.split(",") if s]
    unknown = sorted(set(names) - set(KNOWN_SYSTEMS))
    if unknown:
        parser.error(f"unknown system(s) {', '.join(unknown)}; choose from {KNOWN_SYSTEMS}")
    write = not args.quick and not args.no_readme and sorted(names) == sorted(SYSTEM_NAMES)
    asyncio.run(run(names, QUICK if args.quick else FULL, quick=args.quick, write=write))


if __name__ == "__main__":
    main()
