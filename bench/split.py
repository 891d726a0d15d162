"""``python -m bench.split``: where the CPU of a drain goes — the worker process, the
PostgreSQL server, the machine — for ferry and pgqueuer at their best settings.

The (b) rows of ``python -m bench`` report the worker's own CPU per job; a drain also costs
the server its statements, and on a small machine the two share the cores. This drains a
pre-filled queue (one worker process, as (b)'s best row) while reading, before and after:
the machine's busy time (``/proc/stat``) and every ``postgres`` process's CPU, the backends
that exited meanwhile included (their time is added to the postmaster's children's time).
It then prints how many row versions the drain wrote, by table (``pg_stat_user_tables``):
the server's work per run, in rows. The server must run on this machine (the embedded one
when ``DATABASE_URL`` is unset); a remote server's CPU is not seen, and its column reads
"—". Nothing is asserted; the systems alternate, run after run.

    python -m bench.split [--count 20000] [--runs 2] [--systems ferry,pgqueuer]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from dataclasses import dataclass

import asyncpg

from bench.server import fresh_database, local_server
from bench.sizes import FULL
from bench.systems import System, load_system
from bench.workloads import WorkerProcess, prefill

_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
_COUNTERS = """
SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del
FROM pg_stat_user_tables
WHERE n_tup_ins + n_tup_upd + n_tup_del > 0
ORDER BY relname
"""


@dataclass(frozen=True)
class CpuReading:
    """Seconds of CPU, at one instant, of the machine and of the local PostgreSQL server."""

    machine_busy_s: float
    server_s: float | None  # None: no postgres process on this machine

    @classmethod
    def now(cls) -> CpuReading:
        return cls(_machine_busy_s(), _server_s())


def _machine_busy_s() -> float:
    """Every CPU's time outside idle and iowait since boot (``/proc/stat``'s first line)."""
    with open("/proc/stat") as stat:
        fields = [int(f) for f in stat.readline().split()[1:9]]
    idle, iowait = fields[3], fields[4]
    return (sum(fields) - idle - iowait) / _TICKS_PER_SECOND


def _server_s() -> float | None:
    """The CPU of every process named ``postgres``, with the time of the children each has
    waited for: a backend that exited is counted in its postmaster's."""
    total, found = 0, False
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                line = stat.read()
        except OSError:  # gone meanwhile
            continue
        if line[line.index("(") + 1 : line.rindex(")")] != "postgres":
            continue
        found = True
        # After the name: state, ppid, … fields 14–17 of proc(5) are utime, stime,
        # cutime, cstime.
        rest = line[line.rindex(")") + 2 :].split()
        total += sum(int(x) for x in rest[11:15])
    return total / _TICKS_PER_SECOND if found else None


@dataclass(frozen=True)
class Split:
    """One drain: its rate and the CPU per job on each side."""

    system: str
    jobs_per_s: float
    worker_us: float
    server_us: float | None
    machine_us: float
    busy_cores: float
    rows: list[asyncpg.Record]


async def drain_split(system: System, server_dsn: str, count: int) -> Split:
    """Pre-fill ``count`` no-op jobs, then drain them with one worker process at the
    system's best setting, reading the CPU around the drain."""
    concurrency, batch_size = (
        (FULL.ferry_best_concurrency, None)
        if system.name == "ferry"
        else (None, FULL.pgqueuer_big_batch)
    )
    async with fresh_database(server_dsn, system.name) as dsn:
        await system.install(dsn)
        await prefill(system, dsn, count)
        worker = WorkerProcess(
            system, dsn, "drain", count, concurrency, batch_size, FULL.drain_timeout_s
        )
        await worker.start()
        before, started = CpuReading.now(), time.perf_counter()
        result = await worker.result()
        after, window_s = CpuReading.now(), time.perf_counter() - started
        connection = await asyncpg.connect(dsn)
        try:
            await connection.execute("SELECT pg_stat_force_next_flush()")
            rows = await connection.fetch(_COUNTERS)
        finally:
            await connection.close()
    jobs = int(result["jobs"])
    server_us = (
        (after.server_s - before.server_s) / jobs * 1e6
        if after.server_s is not None and before.server_s is not None
        else None
    )
    machine_s = after.machine_busy_s - before.machine_busy_s
    return Split(
        system=system.name,
        jobs_per_s=jobs / float(result["seconds"]),
        worker_us=float(result["cpu_seconds"]) / jobs * 1e6,
        server_us=server_us,
        machine_us=machine_s / jobs * 1e6,
        busy_cores=machine_s / window_s,
        rows=rows,
    )


def _line(split: Split) -> str:
    server = f"{split.server_us:6.1f}" if split.server_us is not None else "     —"
    return (
        f"{split.system:9s} {split.jobs_per_s:8,.0f} jobs/s   worker {split.worker_us:5.1f}"
        f"   server {server}   machine {split.machine_us:6.1f} µs/job"
        f"   busy cores {split.busy_cores:4.2f}"
    )


async def main(count: int, runs: int, names: list[str]) -> None:
    systems = [load_system(name) for name in names]
    with local_server() as server_dsn:
        for run in range(runs):
            for system in systems if run % 2 == 0 else systems[::-1]:
                split = await drain_split(system, server_dsn, count)
                print(_line(split), flush=True)
                if run == 0:
                    for row in split.rows:
                        print(
                            f"    {row['relname']:16s} inserted {row['n_tup_ins']:7,}"
                            f"  updated {row['n_tup_upd']:7,} (HOT {row['n_tup_hot_upd']:,})"
                            f"  deleted {row['n_tup_del']:7,}",
                            flush=True,
                        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=FULL.end_to_end)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--systems", default="ferry,pgqueuer")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.count, arguments.runs, arguments.systems.split(",")))
