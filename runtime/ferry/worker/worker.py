"""``job_worker(...)``: the process a platform team runs by the dozen.

It claims in batches up to its free capacity, runs each claimed attempt through
``execute_job`` (which owns the verdict, heartbeats and settles), and sleeps on the
driver's wake between claims. Stopping has two shapes, as the spec lays out:

* ``stop()`` stops claiming and *waits* for every held run, aborting nothing;
* ``drain()`` (SIGTERM) stops claiming, aborts every held run's signal with
  ``X_DRAINING`` and waits until the drain deadline; runs still going then are abandoned
  unsettled, so their leases lapse and another worker redelivers them (attempt counted).
  A ``stop()`` already waiting adopts the drain's deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from ferry.drivers.protocol import ClaimOptions, JobDriver
from ferry.errors import FerryError
from ferry.jobs.declaration import JobDefinition, JobHandle, declared_jobs
from ferry.jobs.execute import execute_job, unenforceable
from ferry.jobs.facade import current_job_driver
from ferry.jobs.observer import ExecutionObserver
from ferry.jobs.signal import AbortSignal
from ferry.worker.identity import new_worker_id

logger = logging.getLogger("ferry.worker")


class JobWorker:
    """Runs the declared jobs of this process against one driver."""

    def __init__(
        self,
        *,
        driver: JobDriver | None = None,
        jobs: Iterable[JobHandle[Any, Any]] | None = None,
        queues: Sequence[str] | None = None,
        concurrency: int = 10,
        lease_ms: int = 30_000,
        drain_seconds: float = 30.0,
        worker_id: str | None = None,
        observer: ExecutionObserver | None = None,
    ) -> None:
        if concurrency < 1:
            raise FerryError(
                "X_INVARIANT",
                f"worker concurrency {concurrency} must be at least 1",
                "pass concurrency=1 or more (--concurrency)",
            )
        self._driver = driver
        self._definitions: list[JobDefinition[Any, Any]] | None = (
            [handle.definition for handle in jobs] if jobs is not None else None
        )
        self.queues = list(queues) if queues is not None else None
        self.concurrency = concurrency
        self.lease_ms = lease_ms
        self.drain_seconds = drain_seconds
        self.worker_id = worker_id or new_worker_id()
        self.observer = observer or ExecutionObserver()
        self.signal = AbortSignal()
        self._in_flight: set[asyncio.Task[Any]] = set()
        self._capacity = asyncio.Event()
        self._stopping = asyncio.Event()
        self._drain_deadline: asyncio.Future[None] | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self._by_name: dict[str, JobDefinition[Any, Any]] = {}

    @property
    def driver(self) -> JobDriver:
        if self._driver is None:
            self._driver = current_job_driver()
        return self._driver

    @property
    def in_flight(self) -> int:
        """How many attempts this worker is executing now."""
        return len(self._in_flight)

    async def start(self) -> None:
        """Refuse what cannot be enforced, then begin claiming in the background."""
        definitions = self._definitions if self._definitions is not None else declared_jobs()
        self._by_name = {d.name: d for d in definitions}
        needing_leases = [d.name for d in definitions if d.concurrency is not None]
        if needing_leases and self.driver.leases is None:
            raise unenforceable(needing_leases, self.driver.name)
        logger.info(
            "jobs.worker.started",
            extra={"worker_id": self.worker_id, "jobs": sorted(self._by_name)},
        )
        self._loop_task = asyncio.create_task(self._claim_loop(), name="ferry-claim-loop")

    async def stop(self) -> None:
        """Stop claiming and wait for every held run (until a drain sets a deadline)."""
        self._stopping.set()
        self._capacity.set()
        if self._loop_task is not None:
            await self._loop_task
        while self._in_flight:
            pending: asyncio.Future[Any] = asyncio.gather(*self._in_flight, return_exceptions=True)
            if self._drain_deadline is None:
                self._drain_deadline = asyncio.get_running_loop().create_future()
            deadline: asyncio.Future[Any] = self._drain_deadline
            await asyncio.wait({pending, deadline}, return_when=asyncio.FIRST_COMPLETED)
            if self._drain_deadline.done() and self._in_flight:
                self._abandon()
                await asyncio.gather(*self._in_flight, return_exceptions=True)
        logger.info("jobs.worker.stopped", extra={"worker_id": self.worker_id})

    def drain(self, signal_name: str = "SIGTERM") -> None:
        """Abort every held run with ``X_DRAINING`` and set the drain deadline."""
        if self.signal.aborted:
            return
        logger.warning(
            "jobs.worker.draining",
            extra={
                "worker_id": self.worker_id,
                "signal": signal_name,
                "held": len(self._in_flight),
                "drain_seconds": self.drain_seconds,
            },
        )
        self._stopping.set()
        self._capacity.set()
        self.signal.abort(
            FerryError(
                "X_DRAINING",
                f"worker {self.worker_id} is draining ({signal_name}); the run goes back to "
                "the queue uncounted",
                "nothing to fix — another worker resumes it from its last completed step",
            )
        )
        loop = asyncio.get_running_loop()
        if self._drain_deadline is None:
            self._drain_deadline = loop.create_future()
        deadline = self._drain_deadline
        loop.call_later(self.drain_seconds, _resolve, deadline)

    async def close(self) -> None:
        """Stop (waiting), then hand back the driver's wake."""
        await self.stop()
        await self.driver.wake().close()

    def _abandon(self) -> None:
        logger.error(
            "jobs.worker.abandoned",
            extra={"worker_id": self.worker_id, "held": len(self._in_flight)},
        )
        for task in self._in_flight:
            task.cancel()

    async def _claim_loop(self) -> None:
        wake = self.driver.wake()
        names = sorted(self._by_name)
        while not self._stopping.is_set():
            free = self.concurrency - len(self._in_flight)
            if free <= 0:
                self._capacity.clear()
                await self._capacity.wait()
                continue
            try:
                claimed = await self.driver.claim(
                    ClaimOptions(
                        worker_id=self.worker_id,
                        lease_ms=self.lease_ms,
                        limit=free,
                        queues=self.queues,
                        names=names,
                    )
                )
            except (OSError, ConnectionError) as error:
                logger.warning("jobs.claim.failed", extra={"error": str(error)})
                claimed = []
            for run in claimed:
                task = asyncio.create_task(
                    execute_job(
                        run,
                        driver=self.driver,
                        worker_id=self.worker_id,
                        lease_ms=self.lease_ms,
                        parent_signal=self.signal,
                        observer=self.observer,
                        resolve=self._by_name.get,
                    ),
                    name=f"ferry-run-{run.id}",
                )
                self._in_flight.add(task)
                task.add_done_callback(self._finished)
            if not claimed:
                waiter = asyncio.ensure_future(wake.wait(wake.idle_poll_ms))
                stopping = asyncio.ensure_future(self._stopping.wait())
                await asyncio.wait({waiter, stopping}, return_when=asyncio.FIRST_COMPLETED)
                for pending in (waiter, stopping):
                    pending.cancel()

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._in_flight.discard(task)
        self._capacity.set()
        if not task.cancelled() and task.exception() is not None:
            logger.error("jobs.worker.execution-crashed", exc_info=task.exception())


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def job_worker(**options: Any) -> JobWorker:
    """A worker for the declared jobs (see ``JobWorker`` for the options)."""
    return JobWorker(**options)


async def run_until_signalled(worker: JobWorker) -> None:
    """Start ``worker``; on SIGTERM/SIGINT drain it; a second signal exits at once."""
    import signal

    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    received: list[str] = []

    def on_signal(name: str) -> None:
        if received:
            logger.error("jobs.worker.forced-exit", extra={"signal": name})
            raise SystemExit(1)
        received.append(name)
        worker.drain(name)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig.name)
    await worker.start()
    stopper = asyncio.create_task(_stop_when_drained(worker, done))
    await done.wait()
    with contextlib.suppress(asyncio.CancelledError):
        await stopper


async def _stop_when_drained(worker: JobWorker, done: asyncio.Event) -> None:
    await worker._stopping.wait()
    await worker.close()
    done.set()
