"""``python -m bench.drain``: how fast ``ferry jobs drain`` moves runs, per batch size.

For each batch size: two fresh databases on one local server, the source filled with
queued runs (one in ten carrying a recorded step, as a retrying run does), then the drain's
own loop (``ferry._move.move_runs``: reserve, import, remove per batch) moves them all to
the target. Process start-up is not timed. The best of ``--runs`` runs per size is
printed; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from bench.server import fresh_database, local_server
from ferry._move import move_runs
from ferry.drivers import postgres_job_driver
from ferry.drivers.protocol import ClaimOptions, EnqueueRequest, NackOptions, StepRecord

_FILL_CALL = 5_000


async def _fill(dsn: str, runs: int) -> None:
    source = postgres_job_driver(dsn)
    try:
        now = source.clock.now_ms()
        for start in range(0, runs, _FILL_CALL):
            await source.enqueue_many(
                [
                    EnqueueRequest(
                        name="bench.drain",
                        queue="default",
                        payload={"n": n, "org": f"org-{n % 97}"},
                        idempotency_key=f"drain:{n}",
                        max_attempts=5,
                        tenant=f"t{n % 7}",
                    )
                    for n in range(start, min(start + _FILL_CALL, runs))
                ]
            )
        retrying = await source.claim(ClaimOptions("bench", 600_000, limit=runs // 10))
        for run in retrying:
            step = StepRecord("first", "run", {"ok": True}, now, now + 1)
            await source.steps.record(run.id, step, worker_id="bench")
        await source.settle_many([(run.id, NackOptions("bench", "retry")) for run in retrying])
    finally:
        await source.close()


async def _one(server: str, runs: int, batch: int) -> tuple[float, float]:
    """Runs per second and the median batch's milliseconds of one drain."""
    async with (
        fresh_database(server, "drain_src") as src,
        fresh_database(server, "drain_dst") as dst,
    ):
        await _fill(src, runs)
        source, target = postgres_job_driver(src), postgres_job_driver(dst)
        try:
            await target.open()
            await source.open()
            started = time.perf_counter()
            report = await move_runs(source, target, drain_id="bench", batch=batch)
            seconds = time.perf_counter() - started
        finally:
            await source.close()
            await target.close()
    assert report.total().removed == runs, report.total()
    return runs / seconds, statistics.median(b.ms for b in report.batches)


async def _main(runs: int, batches: list[int], repeat: int) -> None:
    with local_server() as server:
        print(f"{runs:,} queued runs (a tenth with a recorded step), Postgres to Postgres")
        print(f"{'batch':>7} {'runs/s':>9} {'ms/batch':>9}")
        for batch in batches:
            results = [await _one(server, runs, batch) for _ in range(repeat)]
            rate, ms = max(results)
            print(f"{batch:>7} {rate:>9,.0f} {ms:>9.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.drain", description=__doc__)
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--batches", default="50,200,500,2000")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    sizes = [int(size) for size in args.batches.split(",")]
    asyncio.run(_main(args.runs, sizes, args.repeat))


if __name__ == "__main__":
    main()
