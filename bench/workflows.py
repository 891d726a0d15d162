"""(h) a fan-out of many children end to end and (i) result wait latency, on ferry's drivers.

Both run a ferry worker in a process of its own (``python -m bench.workflows worker SYSTEM
DSN``, which prints ``READY`` once it listens and drains on SIGTERM), and wait for results
in the bench's process — as a web process waits on a worker fleet, so the wait hears of
the end across processes (Postgres NOTIFY, Redis pub/sub, SQLite's commit watcher):

* (h): one parent run fans out ``children`` no-op children (``step.enqueue``, batches of
  1,000), waits for all of them (``step.wait``) and answers how many completed; timed from
  the parent's enqueue to its result in the bench's hand (``await queued.result()``);
* (i): ``samples`` runs of a job returning its input, one at a time: each timed from just
  before its enqueue to its result in hand.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from dataclasses import dataclass

from pydantic import BaseModel

from bench.server import fresh_database
from bench.stats import Percentiles, percentiles
from bench.systems import load_system
from bench.systems.ferry_system import FerrySystem
from ferry import Step, job, job_worker, set_job_driver

WORKER_CONCURRENCY = 32
_START_TIMEOUT_S = 60.0


class Leaf(BaseModel):
    n: int


class Fan(BaseModel):
    children: int


@job(input=Leaf, idempotency_key=lambda i: f"leaf:{i.n}", name="bench-leaf")
async def leaf(input: Leaf) -> int:
    """A child: does nothing, returns its number."""
    return input.n


@job(input=Fan, idempotency_key=lambda i: f"fan:{i.children}", name="bench-fan")
async def fan(input: Fan, step: Step) -> int:
    """Fans out ``children`` leaves, waits for them, answers how many completed."""
    children = await step.enqueue("fan-out", [(leaf, {"n": n}) for n in range(input.children)])
    outcomes = await step.wait("gather", children, timeout="1h")
    return sum(1 for outcome in outcomes if outcome.state == "completed")


@job(input=Leaf, idempotency_key=lambda i: f"echo:{i.n}", name="bench-echo")
async def echo(input: Leaf) -> int:
    """Returns its input: what a result wait waits for."""
    return input.n


@dataclass(frozen=True)
class Workflows:
    """(h) and (i) on one driver."""

    fan_out_children: int
    fan_out_seconds: float
    result_wait: Percentiles


async def measure_workflows(
    system: FerrySystem, server_dsn: str, *, children: int, samples: int
) -> Workflows:
    """(h) then (i), each on a fresh store, with a worker process of its own."""
    async with fresh_database(server_dsn, f"{system.name}_fan") as dsn, _worker(system, dsn):
        driver = system.driver(dsn)
        set_job_driver(driver)
        try:
            started = time.perf_counter()
            queued = await fan.enqueue({"children": children})
            completed = await queued.result(timeout="30m")
            seconds = time.perf_counter() - started
            assert completed == children, f"{completed} of {children} children completed"
        finally:
            set_job_driver(None)
            await driver.close()
    async with fresh_database(server_dsn, f"{system.name}_result") as dsn, _worker(system, dsn):
        driver = system.driver(dsn)
        set_job_driver(driver)
        try:
            latencies = []
            for n in range(-5, samples):  # five untimed warm-up runs
                started = time.perf_counter()
                answer = await (await echo.enqueue({"n": n})).result(timeout="1m")
                if n >= 0:
                    latencies.append((time.perf_counter() - started) * 1000)
                assert answer == n
        finally:
            set_job_driver(None)
            await driver.close()
    return Workflows(children, seconds, percentiles(latencies))


class _worker:
    """A worker process for ``leaf``, ``fan`` and ``echo`` on ``dsn``, drained on exit."""

    def __init__(self, system: FerrySystem, dsn: str) -> None:
        self._args = (system.name, dsn)
        self._process: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> None:
        self._process = process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.workflows", "worker", *self._args,
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), _START_TIMEOUT_S)
        if line.strip() != b"READY":
            raise RuntimeError(f"the workflow worker did not start: {line!r}")

    async def __aexit__(self, *_: object) -> None:
        assert self._process is not None
        self._process.send_signal(signal.SIGTERM)
        await self._process.wait()


async def _work(name: str, dsn: str) -> None:
    """The worker process: ferry's worker on the three jobs until SIGTERM."""
    system = load_system(name)
    assert isinstance(system, FerrySystem)
    driver = system.driver(dsn)
    set_job_driver(driver)
    worker = job_worker(driver=driver, jobs=[leaf, fan, echo], concurrency=WORKER_CONCURRENCY)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await worker.start()
    print("READY", flush=True)
    await stop.wait()
    await worker.stop()
    await driver.close()


if __name__ == "__main__":
    _, role, system_name, database = sys.argv
    assert role == "worker"
    asyncio.run(_work(system_name, database))
