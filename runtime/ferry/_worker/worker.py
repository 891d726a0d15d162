"""``job_worker(...)``: the process a platform team runs by the dozen.

It claims in batches up to its free capacity, runs each claimed attempt through
``execute_job`` (which owns the verdict, heartbeats and settles), and sleeps on the
driver's wake between claims. Stopping has two shapes, as the spec lays out:

* ``stop()`` stops claiming and *waits* for every held run, aborting nothing;
* ``drain()`` (SIGTERM, see ``worker/drain.py``) stops claiming, aborts every held run's
  signal with ``X_DRAINING`` and waits until the drain deadline; a ``stop()`` already
  waiting adopts that deadline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Iterable, Sequence
from typing import Any

from ferry._identity import new_worker_id
from ferry._jobs.declaration import JobHandle, declared_jobs
from ferry._jobs.definition import JobDefinition
from ferry._jobs.execute import Settler, execute_job, unenforceable
from ferry._jobs.facade import current_job_driver
from ferry._jobs.observer import ExecutionObserver, ExecutionReport
from ferry._jobs.policy import Caps
from ferry._jobs.signal import AbortSignal
from ferry._metrics.catalog import WorkerMetrics
from ferry._worker.drain import Drain
from ferry._worker.queue_depth import sample_queue_depth
from ferry._worker.settle_batch import SettleBatch
from ferry.drivers.protocol import ClaimedJob, ClaimOptions, JobDriver
from ferry.errors import FerryError

logger = logging.getLogger("ferry.worker")

CLAIM_BACKOFF_MS = (100, 5_000)
"""First and largest pause after a failed claim (doubling in between)."""

DEFAULT_STATS_INTERVAL_MS = 15_000
"""How often the queue-depth gauge is sampled from ``driver.stats()``."""


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
        heartbeat_interval_ms: int | None = None,
        drain_seconds: float = 30.0,
        worker_id: str | None = None,
        observer: ExecutionObserver | None = None,
        metrics: WorkerMetrics | None = None,
        stats_interval_ms: int = DEFAULT_STATS_INTERVAL_MS,
        caps: Caps | None = None,
    ) -> None:
        if concurrency < 1:
            raise FerryError(
                "X_INVARIANT",
                f"worker concurrency {concurrency} must be at least 1",
                "pass concurrency=1 or more (--concurrency)",
            )
        self._driver = driver
        self.caps = caps
        self._definitions: list[JobDefinition[Any, Any]] | None = (
            [handle.definition for handle in jobs] if jobs is not None else None
        )
        self.queues = list(queues) if queues is not None else None
        self.concurrency = concurrency
        self.lease_ms = lease_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.worker_id = worker_id or new_worker_id()
        self.metrics = metrics
        inner = observer or ExecutionObserver()
        self.observer = metrics.observer(inner) if metrics is not None else inner
        self.signal = AbortSignal()
        self._drain = Drain(self.worker_id, self.signal, drain_seconds)
        self._stats_interval_ms = stats_interval_ms
        self._held: dict[asyncio.Task[Any], ClaimedJob] = {}
        self._capacity = asyncio.Event()
        self._slot_freed = asyncio.Event()
        self._stopping = asyncio.Event()
        self._stopped = asyncio.Event()
        self._claim_task: asyncio.Task[None] | None = None
        self._background: list[asyncio.Task[None]] = []
        self._teardown: asyncio.Task[None] | None = None
        self._by_name: dict[str, JobDefinition[Any, Any]] = {}
        self._limits: dict[str, int] = {}
        self._settler: Settler | None = None
        self._prepared = False

    @property
    def driver(self) -> JobDriver:
        if self._driver is None:
            self._driver = current_job_driver()
        return self._driver

    @property
    def in_flight(self) -> int:
        """How many attempts this worker is executing now."""
        return len(self._held)

    @property
    def draining(self) -> bool:
        """True once a drain (SIGTERM) began."""
        return self._drain.started

    async def start(self) -> None:
        """Refuse what cannot be enforced, then begin claiming in the background."""
        definitions = self._prepare()
        wake = self.driver.wake()
        if self.metrics is not None:
            self.metrics.serve_queues(self.queues or sorted({d.queue for d in definitions}))
            self.metrics.follow_wake(lambda: wake.healthy)
            self._background.append(
                asyncio.create_task(
                    sample_queue_depth(self.driver, self.metrics, self._stats_interval_ms),
                    name="ferry-queue-depth",
                )
            )
        logger.info(
            "jobs.worker.started",
            extra={
                "worker_id": self.worker_id,
                "jobs": sorted(self._by_name),
                "concurrency": self.concurrency,
                "lease_ms": self.lease_ms,
            },
        )
        self._claim_task = asyncio.create_task(self._claim_loop(), name="ferry-claim-loop")

    async def run_due(self) -> int:
        """Claim what is due now, up to the free capacity, and run each claimed attempt to
        its settle; answers how many were claimed. ``ferry.testing``'s harness cranks the
        worker with this: the same claim, execution and settle path as the claim loop."""
        self._prepare()
        free = self.concurrency - len(self._held)
        if free <= 0:
            return 0
        claimed = await self._claim(free)
        tasks = [self._spawn(run) for run in claimed]
        if tasks:
            await asyncio.wait(tasks)
        return len(claimed)

    def _prepare(self) -> list[JobDefinition[Any, Any]]:
        """Resolve the jobs and refuse what cannot be enforced (once); answers the jobs."""
        definitions = self._definitions if self._definitions is not None else declared_jobs()
        if self._prepared:
            return definitions
        self._by_name = {d.name: d for d in definitions}
        capped = [d for d in definitions if d.concurrency is not None]
        if capped and self.driver.leases is None:
            raise unenforceable(sorted(d.name for d in capped), self.driver.name)
        if self.caps is not None and self.driver.leases is None:
            raise unenforceable(["(the worker's tenant/queue/total caps)"], self.driver.name)
        # Only "wait" caps are skipped at claim time: a when_busy="fail" run must be claimed
        # to fail fast with X_CONCURRENCY_BUSY, as it declared.
        self._limits = {
            d.name: d.concurrency.limit
            for d in capped
            if d.concurrency is not None and d.concurrency.when_busy == "wait"
        }
        self._settler = SettleBatch(self.driver.settle_many)
        self._prepared = True
        return definitions

    async def stop(self) -> None:
        """Stop claiming and wait for every held run (until a drain sets a deadline)."""
        await asyncio.shield(self._begin_teardown())

    def drain(self, signal_name: str = "SIGTERM") -> None:
        """Abort every held run with ``X_DRAINING``, then stop by the drain deadline."""
        self._drain.begin(signal_name, held=len(self._held), clock=self.driver.clock)
        self._begin_teardown()

    async def wait_stopped(self) -> None:
        """Return once a ``stop()`` or ``drain()`` has finished its teardown."""
        await self._stopped.wait()

    async def run(self) -> None:
        """Start, serve until ``stop()`` or ``drain()`` finishes, then close."""
        await self.start()
        await self.wait_stopped()
        await self.close()

    async def close(self) -> None:
        """Stop, waiting for held runs (the driver, and its wake, stay open: the caller's)."""
        await self.stop()

    def _begin_teardown(self) -> asyncio.Task[None]:
        if self._teardown is None:
            self._stopping.set()
            self._capacity.set()
            self._teardown = asyncio.create_task(self._wind_down(), name="ferry-teardown")
        return self._teardown

    async def _wind_down(self) -> None:
        if self._claim_task is not None:
            # Whatever ended the claim loop, the held runs are still owed their wait.
            await asyncio.gather(self._claim_task, return_exceptions=True)
        held = dict(self._held)
        for task in await self._drain.wait_for(list(held)):
            self._report_abandoned(held[task])
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        logger.info("jobs.worker.stopped", extra={"worker_id": self.worker_id})
        self._stopped.set()

    def _report_abandoned(self, run: ClaimedJob) -> None:
        logger.error(
            "jobs.attempt.abandoned",
            extra={
                "worker_id": self.worker_id,
                "job_id": run.id,
                "job": run.name,
                "queue": run.queue,
                "drain_seconds": self._drain.seconds,
            },
        )
        claimed_at_ms = run.lease_expires_at_ms - self.lease_ms
        self.observer.execution_finished(
            ExecutionReport(
                job_id=run.id,
                job_name=run.name,
                queue=run.queue,
                attempt=run.attempt,
                outcome="abandoned",
                code="X_DRAINING",
                message=f"abandoned at the {self._drain.seconds} s drain deadline",
                duration_ms=self.driver.clock.now_ms() - claimed_at_ms,
                landed=False,
            )
        )

    async def _claim_loop(self) -> None:
        wake = self.driver.wake()
        failures = 0
        while not self._stopping.is_set():
            free = self.concurrency - len(self._held)
            if free <= 0:
                self._capacity.clear()
                await self._capacity.wait()
                continue
            # Cleared before the claim: a keyed run that settles during the round trip
            # keeps it set, so its freed slot is claimed at once, not at the next poll.
            self._slot_freed.clear()
            try:
                claimed = await self._claim(free)
            except Exception as error:  # the database restarting must not end the worker
                failures += 1
                initial, ceiling = CLAIM_BACKOFF_MS
                logger.warning(
                    "jobs.claim.failed",
                    extra={"error": f"{type(error).__name__}: {error}", "failures": failures},
                )
                if self.metrics is not None:
                    self.metrics.claim_failures.inc()
                await self._idle(self.driver.clock.sleep_ms(min(initial * 2**failures, ceiling)))
                continue
            failures = 0
            for run in claimed:
                self._spawn(run)
            if len(claimed) < free:
                # A short batch means nothing else was due: claiming again at once would
                # come back empty. Sleep until an enqueue, a freed slot, or the idle poll.
                await self._idle(wake.wait(wake.idle_poll_ms), self._slot_freed.wait())

    async def _claim(self, free: int) -> list[ClaimedJob]:
        options = ClaimOptions(
            worker_id=self.worker_id,
            lease_ms=self.lease_ms,
            limit=free,
            queues=self.queues,
            names=sorted(self._by_name),
            limits=self._limits,
        )
        started = time.perf_counter()
        claimed = await self.driver.claim(options)
        if self.metrics is not None:
            self.metrics.claim_duration.observe(time.perf_counter() - started)
        return claimed

    async def _idle(self, *waits: Awaitable[object]) -> None:
        """Wait for the first of ``waits`` — or for the worker to stop."""
        tasks = [asyncio.ensure_future(w) for w in (*waits, self._stopping.wait())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()

    def _spawn(self, run: ClaimedJob) -> asyncio.Task[Any]:
        task = asyncio.create_task(
            execute_job(
                run,
                driver=self.driver,
                worker_id=self.worker_id,
                lease_ms=self.lease_ms,
                parent_signal=self.signal,
                observer=self.observer,
                resolve=self._by_name.get,
                heartbeat_interval_ms=self.heartbeat_interval_ms,
                settler=self._settler,
                caps=self.caps,
            ),
            name=f"ferry-run-{run.id}",
        )
        self._held[task] = run
        self._set_in_flight()
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        run = self._held.pop(task, None)
        self._set_in_flight()
        self._capacity.set()
        if run is not None and run.concurrency_key is not None:
            self._slot_freed.set()
        if not task.cancelled() and task.exception() is not None:
            logger.error(
                "jobs.worker.execution-crashed",
                extra={"job_id": run.id if run else None, "worker_id": self.worker_id},
                exc_info=task.exception(),
            )

    def _set_in_flight(self) -> None:
        if self.metrics is not None:
            self.metrics.in_flight.set(len(self._held))


def job_worker(**options: Any) -> JobWorker:
    """A worker for the declared jobs (see ``JobWorker`` for the options)."""
    return JobWorker(**options)
