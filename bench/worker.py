"""The worker process: one system's own worker on a no-op job, measured from inside.

Run by the orchestrator as ``python -m bench.worker SYSTEM DSN MODE ...``; it prints
``READY`` once the worker listens, then one JSON line with what it measured:

* ``drain``: the queue is pre-filled with ``--count`` jobs; the clock runs from the
  first job body to the moment the system reports every job settled;
* ``share``: like ``drain``, for one of several processes draining one queue together:
  it cannot count to the end, so once it has gone idle it polls until the system reports
  every job settled, and reports wall-clock instants the orchestrator can combine;
* ``soak``: a ``drain`` that also reports the process's resident memory (RSS) when the
  bodies run reached each of ``--marks``;
* ``latency``: every body records now minus its payload's enqueue instant, until
  ``--count`` bodies ran;
* ``steady``: runs for ``--timeout`` seconds while the orchestrator enqueues at a steady
  rate, and reports every claim statement's duration and every body's start, each with its
  wall-clock instant (the pinned-horizon workload cuts them into phases).

Every drain also reports the CPU time the process spent from the first body to the end
(``time.process_time``: the worker's own cost per job, whatever else the machine runs).
All modes stop by themselves after ``--timeout`` seconds, reporting what they got.
``--loop`` picks the event loop the process runs on (``uvloop``: what ferry's and
pgqueuer's own commands run on when it is installed; ``asyncio``: the standard loop).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from asyncio import FIRST_COMPLETED
from collections.abc import Callable

from bench.systems import KNOWN_SYSTEMS, Counter, load_system


def _uvloop() -> Callable[[], asyncio.AbstractEventLoop]:
    import uvloop

    return uvloop.new_event_loop


LOOPS: dict[str, Callable[[], Callable[[], asyncio.AbstractEventLoop]]] = {
    "uvloop": _uvloop,
    "asyncio": lambda: asyncio.new_event_loop,
}
"""The event loops a worker process may run on, each a factory of its loop factory."""

_SETTLE_POLL_S = 0.01
_IDLE_S = 0.05
"""A sharing worker that started no body for this long polls for the end of the drain."""
_STOP_TIMEOUT_S = 30.0
_PAGE = os.sysconf("SC_PAGE_SIZE")


def resident_bytes() -> int:
    """This process's resident set size."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * _PAGE


class Tally:
    """What the job bodies reported: how many ran, when, their latencies, RSS at marks."""

    def __init__(self, expected: int, marks: tuple[int, ...] = (), latencies: bool = False) -> None:
        self.expected = expected
        self.keep_latencies = latencies
        """Only the latency mode keeps one figure per job: a drain keeps nothing per job, so
        a soak measures the worker's memory and not the bench's."""
        self.count = 0
        self.first_at: float | None = None
        self.first_wall: float | None = None
        self.first_cpu: float | None = None
        self.last_at = time.perf_counter()
        self.latencies_ms: list[float] = []
        self.marks = set(marks)
        self.rss: dict[int, int] = {}
        self.all_ran = asyncio.Event()

    def on_job(self, n: int, t0: float) -> None:
        """Called by each body with its payload; warm-up jobs (``n < 0``) are not counted."""
        now = time.time()
        if n < 0:
            return
        self.last_at = time.perf_counter()
        if self.first_at is None:
            self.first_at, self.first_wall = self.last_at, now
            self.first_cpu = time.process_time()
        if self.keep_latencies:
            self.latencies_ms.append((now - t0) * 1000)
        self.count += 1
        if self.count in self.marks:
            self.rss[self.count] = resident_bytes()
        if self.count >= self.expected:
            self.all_ran.set()

    def cpu_seconds(self) -> float:
        """CPU time this process spent since the first body."""
        return time.process_time() - self.first_cpu if self.first_cpu is not None else 0.0


async def measure(args: argparse.Namespace) -> dict[str, object]:
    """Run the worker in the background and measure ``args.mode``; stops it before returning."""
    system = load_system(args.system)
    marks = tuple(int(m) for m in args.marks.split(",")) if args.marks else ()
    tally = Tally(args.count, marks, latencies=args.mode == "latency")
    ready, stop = asyncio.Event(), asyncio.Event()
    claims: list[tuple[float, float]] = []
    bodies: list[float] = []
    steady = args.mode == "steady"
    working = asyncio.create_task(
        system.work(
            args.dsn,
            concurrency=args.concurrency,
            batch_size=args.batch_size,
            on_job=(lambda n, t0: bodies.append(time.time())) if steady else tally.on_job,
            ready=ready,
            stop=stop,
            on_claim=(lambda seconds: claims.append((time.time(), seconds))) if steady else None,
        )
    )
    deadline = time.perf_counter() + args.timeout
    listening = asyncio.create_task(ready.wait())
    # A worker that fails to start ends `working`: report its error instead of waiting out
    # the whole bound for a READY that never comes.
    await asyncio.wait({listening, working}, timeout=args.timeout, return_when=FIRST_COMPLETED)
    if not ready.is_set():
        listening.cancel()
        if working.done():
            working.result()
        raise TimeoutError(f"{args.system} worker did not start listening in {args.timeout} s")
    print("READY", flush=True)
    result: dict[str, object]
    if steady:
        await asyncio.sleep(max(0.0, deadline - time.perf_counter()))
        result = {"claims": claims, "bodies": bodies}
    elif args.mode == "share":
        settled = await _drained_together(await system.counter(args.dsn), tally, deadline)
        result = {
            "jobs": tally.count,
            "first_wall": tally.first_wall,
            "end_wall": time.time(),
            "cpu_seconds": tally.cpu_seconds(),
            "complete": settled,
        }
    else:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(tally.all_ran.wait(), timeout=deadline - time.perf_counter())
        if args.mode in ("drain", "soak"):
            settled = tally.all_ran.is_set() and await _settled(
                await system.counter(args.dsn), deadline
            )
            ended = time.perf_counter()
            started = tally.first_at if tally.first_at is not None else ended
            result = {
                "jobs": tally.count,
                "seconds": ended - started,
                "cpu_seconds": tally.cpu_seconds(),
                "complete": settled,
                "rss": {str(mark): rss for mark, rss in sorted(tally.rss.items())},
            }
        else:
            result = {"latencies_ms": tally.latencies_ms, "complete": tally.all_ran.is_set()}
    stop.set()
    await asyncio.wait_for(working, timeout=_STOP_TIMEOUT_S)
    return result


async def _drained_together(counter: Counter, tally: Tally, deadline: float) -> bool:
    """For one of several workers on one queue: once this one has been idle for a moment,
    poll until the system counts no unfinished job (False if the deadline passes first)."""
    while time.perf_counter() < deadline:
        idle_for = time.perf_counter() - tally.last_at
        if tally.count and idle_for >= _IDLE_S:
            return await _settled(counter, deadline)
        await asyncio.sleep(max(_IDLE_S - idle_for, _SETTLE_POLL_S))
    await counter.close()
    return False


async def _settled(counter: Counter, deadline: float) -> bool:
    """Poll until the system counts no unfinished job; False if the deadline passes first."""
    try:
        while time.perf_counter() < deadline:
            if await counter.unsettled() == 0:
                return True
            await asyncio.sleep(_SETTLE_POLL_S)
    finally:
        await counter.close()
    return False


def main() -> None:
    """Parse the orchestrator's arguments, measure, print the JSON line."""
    parser = argparse.ArgumentParser(prog="python -m bench.worker")
    parser.add_argument("system", choices=KNOWN_SYSTEMS)
    parser.add_argument("dsn")
    parser.add_argument("mode", choices=("drain", "share", "soak", "latency", "steady"))
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--concurrency", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--timeout", type=float, required=True)
    parser.add_argument("--marks", default="", help="soak: body counts to sample RSS at")
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default="asyncio")
    args = parser.parse_args()
    with asyncio.Runner(loop_factory=LOOPS[args.loop]()) as runner:
        result = runner.run(measure(args))
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
