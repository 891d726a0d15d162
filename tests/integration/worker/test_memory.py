"""Nothing grows per run: a worker that has warmed up keeps (next to) nothing per run.

A worker runs for weeks: a few hundred bytes kept per run is gigabytes a week. The test
runs a warm-up, then many more no-op runs through a real worker on Postgres, and compares
what ``tracemalloc`` sees the process holding before and after — counts, never timings.
"""

from __future__ import annotations

import gc
import tracemalloc

from support.waiting import eventually

from ferry._jobs.observer import ExecutionObserver, ExecutionReport
from ferry._worker import job_worker
from ferry.drivers import PostgresJobDriver

from . import app

WARM_UP_RUNS = 500
MEASURED_RUNS = 3_000
KEPT_BYTES_PER_RUN = 64
"""The issue's bound. A per-run leak of the old kind (a listener and an event, ~1 KB) fails
it by far; what a warmed-up worker measures is ~20 B per run over 3,000 runs, none of it
per run: the read buffers and timers alive at the instant of the measurement (~60 KB in
all, bounded by the pool and the concurrency)."""


class _Finished(ExecutionObserver):
    def __init__(self) -> None:
        self.count = 0

    def execution_finished(self, report: ExecutionReport) -> None:
        self.count += 1


async def test_a_warmed_up_worker_keeps_no_memory_per_run(driver: PostgresJobDriver) -> None:
    finished = _Finished()
    worker = job_worker(driver=driver, jobs=[app.noop], concurrency=32, observer=finished)
    await worker.start()
    try:
        await app.noop.enqueue_many([{"n": n} for n in range(WARM_UP_RUNS)])
        await eventually(
            lambda: finished.count == WARM_UP_RUNS and worker.in_flight == 0,
            what="the warm-up runs settled",
            within_s=600,
        )
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            total = WARM_UP_RUNS + MEASURED_RUNS
            # Batches no bigger than the warm-up's: asyncpg keeps up to 2,000 freed records
            # of each size for reuse, so a bigger batch than any before fills that list —
            # bounded, but it would read as ~50 B per run here.
            for start in range(WARM_UP_RUNS, total, WARM_UP_RUNS):
                await app.noop.enqueue_many(
                    [{"n": n} for n in range(start, min(start + WARM_UP_RUNS, total))]
                )
            await eventually(
                lambda: finished.count == total and worker.in_flight == 0,
                what="the measured runs settled",
                within_s=600,
            )
            gc.collect()
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert kept / MEASURED_RUNS <= KEPT_BYTES_PER_RUN, f"{kept / MEASURED_RUNS:.0f} B per run"
        assert worker.signal.listener_count == 0
    finally:
        await worker.stop()
