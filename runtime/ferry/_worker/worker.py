"""``job_worker(...)``: the process a platform team runs by the dozen.

Claiming, running and settling overlap. One loop decides every round trip to the queue:
it takes the verdicts that runs submitted since the last trip (``SettleQueue``) and the
claim for the capacity free now, and sends both in one ``driver.settle_and_claim`` — so a
burst of finished runs is settled and replaced in one statement while the other bodies run
— with up to ``TRIPS_IN_FLIGHT`` trips out at once, so the next batch's claim travels while
the last batch's settle does. A run frees its capacity the moment its body ends and its
verdict is submitted, not when the settle lands; it stays *held* until the settle's answer
arrives (``on_settled``, the report and a drain all wait for that). Each attempt is one
task (``Execution``). One ``LeaseKeeper`` renews every held lease in one statement per
heartbeat interval. Sync bodies and sync step functions run on the worker's thread pool of
``concurrency`` threads; a thread stranded by an abandoned sync body counts against the
capacity until it returns.

A claim that comes back short means nothing else is due: the loop then sleeps until an
enqueue wakes it (the driver's wake), a run it knows of becomes due (its own nacks'
backoff; a delayed enqueue's NOTIFY, through the wake), a verdict or freed capacity needs
a trip, or the idle poll comes round.

Stopping has two shapes, as the spec lays out:

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

from ferry import _fleet
from ferry._aio import first_of, reap, supervise
from ferry._identity import new_worker_id
from ferry._jobs.declaration import JobHandle, declared_jobs
from ferry._jobs.definition import JobDefinition
from ferry._jobs.execute import DEFAULT_TIMEOUT_GRACE_MS, Execution, unenforceable
from ferry._jobs.facade import current_job_driver
from ferry._jobs.heartbeat import LeaseKeeper
from ferry._jobs.observer import ExecutionObserver, ExecutionReport
from ferry._jobs.policy import Caps
from ferry._jobs.signal import AbortSignal
from ferry._jobs.threads import ThreadPool
from ferry._metrics.catalog import WorkerMetrics
from ferry._metrics.queue_catalog import sample_queues
from ferry._wakeup import DueInstants
from ferry._worker.drain import Drain
from ferry._worker.fleet_gauge import sample_workers
from ferry._worker.settle_queue import SettleBatch, SettleQueue
from ferry.drivers.capabilities import SLOTS, need, offered
from ferry.drivers.protocol import (
    ClaimedJob,
    ClaimOptions,
    JobDriver,
    NackOptions,
    QueueWake,
    RecordWrite,
)
from ferry.errors import FerryError

logger = logging.getLogger("ferry.worker")

CLAIM_BACKOFF_MS = (100, 5_000)
"""First and largest pause after a failed claim (doubling in between)."""

TRIPS_IN_FLIGHT = 2
"""Round trips a worker keeps out at once, each on a connection of its own."""

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
        self.heartbeat_interval_ms = heartbeat_interval_ms or max(lease_ms // 3, 1)
        self.worker_id = worker_id or new_worker_id()
        self.metrics = metrics
        inner = observer or ExecutionObserver()
        self.observer = metrics.observer(inner) if metrics is not None else inner
        self.signal = AbortSignal()
        self._drain = Drain(self.worker_id, self.signal, drain_seconds)
        self._stats_interval_ms = stats_interval_ms
        self._held: dict[asyncio.Future[ExecutionReport], Execution] = {}
        """Every attempt not yet settled, by its report (its body may have ended): what a
        drain waits for."""
        self._bodies: dict[str, Execution] = {}
        """Attempts whose body has not ended, by run id: what counts against
        ``concurrency``."""
        self._settles = SettleQueue(on_submit=self._body_ended)
        self._due = DueInstants()
        self._nudge = asyncio.Event()
        """Set by everything the round-trip loop reacts to inside the worker: a verdict
        submitted, a round trip answered, a run ended, a stranded thread returning, the
        worker stopping."""
        self.threads = ThreadPool(concurrency, on_free=self._nudge.set)
        """Where sync bodies and sync step functions run."""
        self._stopping = asyncio.Event()
        self._stopped = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None
        self._short = False
        """The last claim came back short: claim again only once woken."""
        self._share = max(1, -(-concurrency // TRIPS_IN_FLIGHT))
        """The most one trip claims: its share of the concurrency."""
        self._trips = 0
        """Round trips out now."""
        self._reserved = 0
        """Capacity the claims of the trips out now may fill."""
        self._sending: set[asyncio.Task[None]] = set()
        self._failures = 0
        """Claims failed in a row (their backoff doubles)."""
        self._backing_off = False
        self._background: list[asyncio.Task[None]] = []
        self._teardown: asyncio.Task[None] | None = None
        self._by_name: dict[str, JobDefinition[Any, Any]] = {}
        self._names: list[str] = []
        self._limits: dict[str, int] = {}
        self._rates: dict[str, tuple[int, int]] = {}
        self._keeper: LeaseKeeper | None = None
        self._prepared = False
        self._registered = False
        """Its presence is in the fleet registry (``start`` put it there)."""
        self._crash: BaseException | None = None
        """What ended the round-trip loop, if a bug did: ``run()`` raises it after the drain."""

    @property
    def driver(self) -> JobDriver:
        if self._driver is None:
            self._driver = current_job_driver()
        return self._driver

    @property
    def in_flight(self) -> int:
        """How many attempts this worker holds now (running, or waiting for their settle)."""
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
            self.metrics.serve_rated(sorted(self._rates))
            self.metrics.follow_wake(lambda: wake.healthy)
            samplers = [
                asyncio.create_task(
                    sample_queues(self.driver, self.metrics.queues, self._stats_interval_ms),
                    name="ferry-queue-depth",
                )
            ]
            if _fleet.keeps_registry(self.driver):
                samplers.append(
                    asyncio.create_task(
                        sample_workers(self.driver, self.metrics, self._stats_interval_ms),
                        name="ferry-fleet-gauge",
                    )
                )
            for sampling in samplers:
                supervise(sampling, logger=logger, event="jobs.stats.failed")
                self._background.append(sampling)
        self._register(definitions)
        logger.info(
            "jobs.worker.started",
            extra={
                "worker_id": self.worker_id,
                "jobs": sorted(self._by_name),
                "concurrency": self.concurrency,
                "lease_ms": self.lease_ms,
            },
        )
        self._loop = asyncio.create_task(self._round_trips(), name="ferry-round-trips")
        supervise(
            self._loop,
            logger=logger,
            event="jobs.worker.crashed",
            fields={"worker_id": self.worker_id, "during": "round-trips"},
            then=self._crashed,
        )

    def _crashed(self, error: BaseException) -> None:
        """The round-trip loop or one of its trips raised (a bug): nothing claims or settles
        reliably any more, so the worker drains — held runs hear ``X_DRAINING`` and are
        abandoned by the deadline — and ``run()`` raises ``error``, so the process exits and
        is restarted instead of answering ``/livez`` while it does nothing."""
        if self._crash is None:
            self._crash = error
        self.drain("worker-crashed")

    def _register(self, definitions: Sequence[JobDefinition[Any, Any]]) -> None:
        """Keep this process's presence in the fleet registry, with every heartbeat from
        now on (a driver without ``records`` keeps no registry)."""
        assert self._keeper is not None
        if not _fleet.keeps_registry(self.driver):
            return
        queues = self.queues or sorted({d.queue for d in definitions})
        started_ms = self.driver.clock.now_ms()
        clock, interval = self.driver.clock, self.heartbeat_interval_ms

        def presence(runs: Sequence[str]) -> RecordWrite:
            return _fleet.presence_record(
                worker_id=self.worker_id,
                queues=queues,
                concurrency=self.concurrency,
                started_at_ms=started_ms,
                now_ms=clock.now_ms(),
                runs=runs,
                interval_ms=interval,
            )

        self._keeper.keep_presence(presence)
        self._registered = True

    async def run_due(self) -> int:
        """Claim what is due now, up to the free capacity, and run each claimed attempt to
        its settle; answers how many runs the claim answered (leased, or deferred by their
        rate limit). ``ferry.testing``'s harness cranks the worker with this: the same
        claim, execution and batched settle as the round-trip loop, one step at a time."""
        self._prepare()
        free = self._free()
        if free <= 0:
            return 0
        answered = await self.driver.claim(self._claim_options(free))
        reports = [self._spawn(run) for run in self._leased(answered)]
        while not all(report.done() for report in reports):
            await first_of(asyncio.wait(reports), self._settles.arrived.wait())
            await self._settles.flush(self.driver.settle_many)
        return len(answered)

    def _prepare(self) -> list[JobDefinition[Any, Any]]:
        """Resolve the jobs and refuse what cannot be enforced (once); answers the jobs."""
        definitions = self._definitions if self._definitions is not None else declared_jobs()
        if self._prepared:
            return definitions
        self._by_name = {d.name: d for d in definitions}
        self._names = sorted(self._by_name)
        capped = [d for d in definitions if d.concurrency is not None]
        if capped and offered(self.driver, SLOTS) is None:
            raise unenforceable(sorted(d.name for d in capped), self.driver.name)
        if self.caps is not None:
            need(self.driver, SLOTS, by="the worker's tenant/queue/total caps")
        for definition in definitions:
            for capability in definition.needs:
                need(self.driver, capability, by=f'job "{definition.name}"')
        # Only "wait" caps are skipped at claim time: a when_busy="fail" run must be claimed
        # to fail fast with X_CONCURRENCY_BUSY, as it declared.
        self._limits = {
            d.name: d.concurrency.limit
            for d in capped
            if d.concurrency is not None and d.concurrency.when_busy == "wait"
        }
        self._rates = {
            d.name: (d.rate.limit, d.rate.per_ms) for d in definitions if d.rate is not None
        }
        self._keeper = LeaseKeeper(
            self.driver,
            worker_id=self.worker_id,
            lease_ms=self.lease_ms,
            interval_ms=self.heartbeat_interval_ms,
            clock=self.driver.clock,
        )
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
        if self._crash is not None:
            raise self._crash

    async def close(self) -> None:
        """Stop, waiting for held runs (the driver, and its wake, stay open: the caller's)."""
        await self.stop()

    def _begin_teardown(self) -> asyncio.Task[None]:
        if self._teardown is None:
            self._stopping.set()
            self._nudge.set()
            self._teardown = asyncio.create_task(self._wind_down(), name="ferry-teardown")
            supervise(
                self._teardown,
                logger=logger,
                event="jobs.worker.crashed",
                fields={"worker_id": self.worker_id, "during": "teardown"},
            )
        return self._teardown

    async def _wind_down(self) -> None:
        try:
            # The round-trip loop claims no more but keeps settling what the held runs submit.
            held = dict(self._held)
            for report in await self._drain.wait_for(list(held)):
                held[report].abandon()
                self._report_abandoned(held[report].claimed)
            if self._loop is not None:
                # Whatever ended the loop, it is over once nothing is held or waits to settle.
                await asyncio.gather(self._loop, return_exceptions=True)
            await reap(*self._background)
            if self._keeper is not None:
                await self._keeper.close()
            self.threads.close()
            await self._depart()
            logger.info("jobs.worker.stopped", extra={"worker_id": self.worker_id})
        finally:
            self._stopped.set()  # a teardown that raised still ends the role: run() returns

    async def _depart(self) -> None:
        """Remove this process's presence from the fleet registry: a clean stop leaves no
        live worker behind. A failed removal is logged: the presence lapses by itself within
        three intervals."""
        try:
            if self._registered:
                await _fleet.depart(self.driver, self.worker_id)
        except Exception as error:
            logger.warning(
                "jobs.worker.depart-failed",
                extra={"worker_id": self.worker_id, "error": f"{type(error).__name__}: {error}"},
            )

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

    async def _round_trips(self) -> None:
        """Every round trip of the hot path: the verdicts submitted since the last one and
        the claim for the capacity free now, in one statement, with up to
        ``TRIPS_IN_FLIGHT`` of them out at once (each on a connection of its own).

        With one trip out, the worker waits for the server and the server for the worker:
        the next batch's claim goes out while the last batch's settle is still travelling.
        A trip claims at most its share of the concurrency (``_share``), so the runs one
        trip brings back free the capacity the next one claims; while a trip is out, a
        second one goes only when it carries a share's worth (a round trip's fixed cost is
        most of its cost), and a lone settle never waits for company when none is out."""
        wake = self.driver.wake()
        try:
            while True:
                self._nudge.clear()  # what follows sees everything that nudged before this
                stopping = self._stopping.is_set()
                free = self._free() - self._reserved
                claim = (
                    min(free, self._share)
                    if not stopping
                    and not self._backing_off
                    and (not self._short or self._settles.pending)
                    else 0
                )
                pending = self._settles.pending
                if self._trips < TRIPS_IN_FLIGHT and (
                    (self._trips == 0 and (pending or claim > 0))
                    or max(pending, claim) >= self._share
                ):
                    self._launch(claim)
                    continue
                if stopping and not self._held and not self._trips:
                    return
                if self._trips:
                    await self._nudge.wait()  # a trip's answer, a verdict, a run ending
                else:
                    await self._idle(wake, free=free, stopping=stopping)
        finally:
            # Nobody will send what still waits: its runs hear so instead of waiting forever.
            if self._settles.pending:
                self._settles.take().failed(
                    FerryError(
                        "X_INVARIANT",
                        f"worker {self.worker_id} stopped settling",
                        "nothing to fix — the runs' leases lapse and they are redelivered",
                    )
                )

    def _launch(self, claim: int) -> None:
        """Send what waits to settle and a claim of ``claim`` runs (0: none) as one trip."""
        options = self._claim_options(claim) if claim > 0 else None
        self._trips += 1
        self._reserved += claim
        trip = asyncio.create_task(self._send(self._settles.take(), options))
        self._sending.add(trip)
        trip.add_done_callback(self._sending.discard)
        # A failed statement is handled inside; what escapes is a bug, like the loop's own.
        supervise(
            trip,
            logger=logger,
            event="jobs.worker.crashed",
            fields={"worker_id": self.worker_id, "during": "trip"},
            then=self._crashed,
        )

    async def _send(self, batch: SettleBatch, options: ClaimOptions | None) -> None:
        """One trip out and back: spawn what it claimed; a failed claim backs off."""
        reserved = options.limit if options is not None else 0
        try:
            claimed = await self._trip(batch, options)
        except Exception as error:  # the database restarting must not end the worker
            self._reserved -= reserved
            if options is not None:
                self._failures += 1
                self._backing_off = True
                try:
                    await self._claim_failed(error, self._failures)
                finally:
                    self._backing_off = False
            # The settles' runs lapse and are redelivered: at-least-once.
            return
        finally:
            self._trips -= 1
            self._nudge.set()
        self._reserved -= reserved
        if options is not None:
            self._failures = 0
            for run in self._leased(claimed):
                self._spawn(run)
            # A short batch means nothing else was due: claiming again at once would come
            # back empty. Runs the claim deferred by their rate limit count as answered: the
            # next claim no longer sees them, and may find runs behind them.
            self._short = len(claimed) < options.limit

    async def _trip(self, batch: SettleBatch, options: ClaimOptions | None) -> list[ClaimedJob]:
        """Send ``batch`` (and claim by ``options``) in one round trip; answers the claimed."""
        clock = self.driver.clock
        claimed: list[ClaimedJob] = []
        try:
            if options is None:
                landed = await self.driver.settle_many(batch.settles)
            else:
                started, claimed_at_ms = time.perf_counter(), clock.now_ms()
                landed, claimed = await self.driver.settle_and_claim(batch.settles, options)
                if self.metrics is not None:
                    self.metrics.claim_duration.observe(time.perf_counter() - started)
                # The claim saw every run due by then, the ones this worker was waiting for too.
                self._due.take_due(claimed_at_ms)
        except Exception as error:  # every run hears the failure of the statement it rode
            batch.failed(error)
            raise
        batch.landed(landed)
        for (_, settle), result in zip(batch.settles, landed, strict=True):
            if result and isinstance(settle, NackOptions) and settle.run_at_ms is not None:
                # Back in the queue from then (a backoff, a deferral, a sleep): wake for it,
                # not for the poll — even if it fell due while this trip was out.
                self._due.add(settle.run_at_ms)
        return claimed

    async def _idle(self, wake: QueueWake, *, free: int, stopping: bool) -> None:
        """Wait for a reason to make a round trip: a nudge from inside the worker and, while
        it could claim, the wake, a known run falling due or the idle poll."""
        if stopping or free <= 0:
            await self._nudge.wait()  # the hot path: no timer, no task
            return
        clock = self.driver.clock
        if self._due.take_due(clock.now_ms()):
            self._short = False  # a run this worker knows of is due already
            return
        woken = asyncio.ensure_future(wake.wait(wake.idle_poll_ms))
        waits: list[Awaitable[object]] = [self._nudge.wait(), woken]
        soonest = self._due.soonest
        if soonest is not None:
            waits.append(clock.sleep_ms(soonest - clock.now_ms()))
        await first_of(*waits)
        # A wake that returned took its arrival with it: claim even when a nudge came in
        # the same turn, or that arrival's run would wait for the next idle poll.
        if not self._nudge.is_set() or (woken.done() and not woken.cancelled()):
            self._short = False  # the wake, a due run or the poll: runs may be due now

    async def _claim_failed(self, error: BaseException, failures: int) -> None:
        """Log and count a failed claim, then wait a while before the next round trip."""
        initial, ceiling = CLAIM_BACKOFF_MS
        logger.warning(
            "jobs.claim.failed",
            extra={"error": f"{type(error).__name__}: {error}", "failures": failures},
        )
        if self.metrics is not None:
            self.metrics.claim_failures.inc()
        backoff = self.driver.clock.sleep_ms(min(initial * 2**failures, ceiling))
        await first_of(backoff, self._stopping.wait())

    def _leased(self, answered: list[ClaimedJob]) -> list[ClaimedJob]:
        """The runs a claim leased; each run it deferred by its rate limit instead is
        reported, and the worker wakes for it when its key has room."""
        if not self._rates:
            return answered
        leased = []
        for run in answered:
            if run.rate_deferred_until_ms is None:
                leased.append(run)
            else:
                self._due.add(run.rate_deferred_until_ms)
                self.observer.rate_limited(run.name, run.id, run.queue, run.rate_deferred_until_ms)
        return leased

    def _free(self) -> int:
        """Capacity to claim for: ``concurrency`` less the running bodies and the threads
        abandoned sync bodies still hold."""
        return self.concurrency - len(self._bodies) - self.threads.stranded

    def _claim_options(self, free: int) -> ClaimOptions:
        return ClaimOptions(
            worker_id=self.worker_id,
            lease_ms=self.lease_ms,
            limit=free,
            queues=self.queues,
            names=self._names,
            limits=self._limits,
            rates=self._rates,
        )

    def _spawn(self, run: ClaimedJob) -> asyncio.Future[ExecutionReport]:
        older = self._bodies.get(run.id)
        if older is not None:  # the store let its lease lapse before its keeper noticed
            older.retaken(run.attempt)
        self.observer.execution_started(run)
        execution = Execution(
            run,
            driver=self.driver,
            settler=self._settles,
            worker_id=self.worker_id,
            lease_ms=self.lease_ms,
            parent_signal=self.signal,
            observer=self.observer,
            timeout_grace_ms=DEFAULT_TIMEOUT_GRACE_MS,
            keeper=self._keeper_or_fail(),
            caps=self.caps,
            threads=self.threads,
        )
        report = execution.start(self._by_name.get(run.name))
        self._held[report] = execution
        self._bodies[run.id] = execution
        self._set_in_flight()
        report.add_done_callback(self._finished)
        return report

    def _keeper_or_fail(self) -> LeaseKeeper:
        assert self._keeper is not None, "the worker is prepared before it claims"
        return self._keeper

    def _body_ended(self, job_id: str) -> None:
        """A run submitted its verdict: its body is over, so its capacity is free now."""
        self._bodies.pop(job_id, None)
        self._nudge.set()

    def _finished(self, report: asyncio.Future[ExecutionReport]) -> None:
        execution = self._held.pop(report, None)
        self._nudge.set()
        run = execution.claimed if execution is not None else None
        if run is not None and self._bodies.get(run.id) is execution:
            del self._bodies[run.id]  # ended without a verdict (lease lost, abandoned)
        self._set_in_flight()
        if not report.cancelled() and report.exception() is not None:
            logger.error(
                "jobs.worker.execution-crashed",
                extra={"job_id": run.id if run else None, "worker_id": self.worker_id},
                exc_info=report.exception(),
            )

    def _set_in_flight(self) -> None:
        if self.metrics is not None:
            self.metrics.in_flight.set(len(self._held))


job_worker = JobWorker
"""``job_worker(...)``: a worker for the declared jobs. The factory is the class itself, so
it takes exactly ``JobWorker``'s typed keywords and mypy refuses a misspelt one."""
