"""Workloads (a)–(c), the same for every system, each in a fresh database."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from typing import IO, Any

from bench.server import fresh_database
from bench.stats import Percentiles, Rate, Soak, drain_rate, percentiles
from bench.systems import Payload, Producer, System

_WARM_UP = 20
_PREFILL_BATCH = 1_000
_EXIT_GRACE_S = 60.0
_LINE_LIMIT = 2**26
"""The longest JSON line a worker may answer (a steady worker reports every claim)."""


def _payload(n: int) -> Payload:
    return {"n": n, "t0": time.time()}


async def _warm_up(producer: Producer) -> None:
    """Open connections and prepare statements before the clock starts (keys never reused)."""
    for n in range(_WARM_UP):
        await producer.enqueue(_payload(-1 - n))


async def enqueue_single(system: System, dsn: str, count: int) -> Rate:
    """(a) ``count`` enqueues, one per round trip, one after the other."""
    producer = await system.producer(dsn)
    try:
        await _warm_up(producer)
        started = time.perf_counter()
        for n in range(count):
            await producer.enqueue(_payload(n))
        return Rate(count / (time.perf_counter() - started))
    finally:
        await producer.close()


async def enqueue_batch(system: System, dsn: str, total: int, batch: int, first: int) -> Rate:
    """(a) ``total`` enqueues through the system's batch API, ``batch`` per call."""
    producer = await system.producer(dsn)
    try:
        await _warm_up(producer)
        started = time.perf_counter()
        for offset in range(0, total, batch):
            size = min(batch, total - offset)
            await producer.enqueue_batch([_payload(first + offset + i) for i in range(size)])
        return Rate(total / (time.perf_counter() - started))
    finally:
        await producer.close()


async def prefill(system: System, dsn: str, count: int) -> None:
    producer = await system.producer(dsn)
    try:
        for offset in range(0, count, _PREFILL_BATCH):
            size = min(_PREFILL_BATCH, count - offset)
            await producer.enqueue_batch([_payload(offset + i) for i in range(size)])
    finally:
        await producer.close()


async def end_to_end(
    system: System,
    server_dsn: str,
    *,
    count: int,
    concurrency: int | None,
    batch_size: int | None,
    timeout_s: float,
    loop: str | None = None,
) -> Rate:
    """(b) Pre-fill ``count`` no-op jobs, then one worker process drains them (on ``loop``,
    default the system's own)."""
    async with fresh_database(server_dsn, system.name) as dsn:
        await system.install(dsn)
        await prefill(system, dsn, count)
        worker = WorkerProcess(
            system, dsn, "drain", count, concurrency, batch_size, timeout_s, loop=loop
        )
        await worker.start()
        result = await worker.result()
    return drain_rate(
        int(result["jobs"]),
        float(result["seconds"]),
        float(result["cpu_seconds"]),
        bool(result["complete"]),
    )


async def shared_drain(
    system: System,
    server_dsn: str,
    *,
    processes: int,
    count: int,
    concurrency: int | None,
    timeout_s: float,
) -> Rate:
    """(b) ``processes`` worker processes on one queue: once all listen, ``count`` jobs are
    enqueued in batches and they drain them together; from the first body in any process
    to every job settled."""
    async with fresh_database(server_dsn, system.name) as dsn:
        await system.install(dsn)
        workers = [
            WorkerProcess(system, dsn, "share", count, concurrency, None, timeout_s)
            for _ in range(processes)
        ]
        for worker in workers:
            await worker.start()
        await prefill(system, dsn, count)
        results = [await worker.result() for worker in workers]
    firsts = [float(r["first_wall"]) for r in results if r["first_wall"] is not None]
    jobs = sum(int(r["jobs"]) for r in results)
    seconds = max(float(r["end_wall"]) for r in results) - min(firsts) if firsts else 0.0
    return drain_rate(
        jobs,
        seconds,
        sum(float(r["cpu_seconds"]) for r in results),
        all(bool(r["complete"]) for r in results),
    )


async def soak(
    system: System,
    server_dsn: str,
    *,
    warm_runs: int,
    runs: int,
    concurrency: int | None,
    timeout_s: float,
) -> Soak:
    """(e) One worker process drains ``runs`` pre-filled jobs; its RSS is sampled after
    ``warm_runs`` and after ``runs``."""
    async with fresh_database(server_dsn, system.name) as dsn:
        await system.install(dsn)
        await prefill(system, dsn, runs)
        worker = WorkerProcess(
            system, dsn, "soak", runs, concurrency, None, timeout_s, marks=(warm_runs, runs)
        )
        await worker.start()
        result = await worker.result()
    rss = {int(mark): int(value) for mark, value in result["rss"].items()}
    rate = drain_rate(
        int(result["jobs"]),
        float(result["seconds"]),
        float(result["cpu_seconds"]),
        bool(result["complete"]),
    )
    return Soak(warm_runs, rss.get(warm_runs, 0), runs, rss.get(runs, 0), rate)


async def wake_latency(
    system: System, server_dsn: str, *, samples: int, rate: float
) -> tuple[Percentiles, bool]:
    """(c) Enqueue one job every ``1/rate`` s to an idle worker; enqueue→start latency."""
    async with fresh_database(server_dsn, system.name) as dsn:
        await system.install(dsn)
        producer = await system.producer(dsn)
        try:
            await _warm_up(producer)
            worker = WorkerProcess(system, dsn, "latency", samples, None, None, samples / rate + 30)
            await worker.start()
            started = time.perf_counter()
            for n in range(samples):
                await asyncio.sleep(max(0.0, started + n / rate - time.perf_counter()))
                await producer.enqueue(_payload(n))
            result = await worker.result()
        finally:
            await producer.close()
    latencies = [float(v) for v in result["latencies_ms"]]
    return percentiles(latencies), bool(result["complete"])


class WorkerProcess:
    """``python -m bench.worker`` for one system: started, awaited until READY, read."""

    def __init__(
        self,
        system: System,
        dsn: str,
        mode: str,
        count: int,
        concurrency: int | None,
        batch_size: int | None,
        timeout_s: float,
        *,
        marks: tuple[int, ...] = (),
        loop: str | None = None,
    ) -> None:
        self._argv = [
            sys.executable,
            "-m",
            "bench.worker",
            system.name,
            dsn,
            mode,
            f"--count={count}",
            f"--timeout={timeout_s}",
            f"--loop={loop or system.loop}",
        ]
        if concurrency is not None:
            self._argv.append(f"--concurrency={concurrency}")
        if batch_size is not None:
            self._argv.append(f"--batch-size={batch_size}")
        if marks:
            self._argv.append(f"--marks={','.join(str(m) for m in marks)}")
        self._timeout_s = timeout_s
        # Lives as long as the process; read only to explain a failure, closed in result().
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        self._process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        """Spawn the worker and return once it listens."""
        self._process = await asyncio.create_subprocess_exec(
            *self._argv,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._stderr,
            limit=_LINE_LIMIT,
        )
        line = await self._line()
        if line != "READY":
            raise self._failed(f"expected READY, got {line!r}")

    async def result(self) -> dict[str, Any]:
        """The worker's JSON line, once it has stopped by itself."""
        line = await self._line()
        assert self._process is not None
        await asyncio.wait_for(self._process.wait(), timeout=_EXIT_GRACE_S)
        if self._process.returncode != 0 or not line:
            raise self._failed(f"exited with {self._process.returncode}")
        self._stderr.close()
        parsed: dict[str, Any] = json.loads(line)
        return parsed

    async def _line(self) -> str:
        assert self._process is not None and self._process.stdout is not None
        try:
            raw = await asyncio.wait_for(
                self._process.stdout.readline(), timeout=self._timeout_s + _EXIT_GRACE_S
            )
        except TimeoutError:
            self._process.kill()
            raise self._failed("did not answer in time") from None
        return raw.decode().strip()

    def _failed(self, what: str) -> RuntimeError:
        self._stderr.seek(0)
        tail = self._stderr.read().decode(errors="replace")[-2_000:]
        return RuntimeError(f"{' '.join(self._argv[3:6])}: worker {what}\n{tail}")
