"""``execute_job``: the one execution path.

It owns the attempt verdict, the step store, the timeout, the lease and the heartbeat;
nothing else calls a job body. The order on a timeout is the whole point: the signal is
aborted first and the body gets a grace period, and only then is the attempt failed —
failing it re-queues the run, and a body still running after that would be a second
copy of one job writing into the same run.

A ``def`` body runs on the worker's thread pool (``ferry._jobs.threads``) and is awaited
like an async one, so the timeout, the drain and the verdict are the same code; only an
abandoned sync body differs, in that its thread cannot be stopped (see that module).

The accounting is honest when the fence speaks: a settle or a step write the store
refuses (the run is no longer this worker's) ends the attempt ``superseded`` — never
``completed`` or ``failed`` — and its lease counts as lost, once per lapse however the
worker learns of it: a whole window with no renewal landing (while the body runs, or while
its settle is in flight), the fence refusing a write, a settle that could not be sent, a
claim that answered too late, or this worker's own claim taking the run again.

A lease known lost stays lost: nothing of the attempt is renewed or settled after it. The
fence is on the claimer, so a write sent then could land on a lease this same worker took
since, for a newer attempt of the run, and settle that run with this attempt's verdict.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import traceback
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any, Protocol, cast

from pydantic import ValidationError

from ferry._bounds import RUN_ID_MAX, bounded_int
from ferry._jobs.context import JobContext
from ferry._jobs.definition import JobDefinition, Settled
from ferry._jobs.heartbeat import HeldLease, LeaseKeeper
from ferry._jobs.observer import REPORTED, ExecutionObserver, ExecutionOutcome, ExecutionReport
from ferry._jobs.policy import Caps
from ferry._jobs.registry import resolve_job
from ferry._jobs.results import stored_result
from ferry._jobs.signal import AbortSignal
from ferry._jobs.step import Parked, Step, SyncStep
from ferry._jobs.threads import ThreadPool, shared_pool
from ferry._jobs.tracing import execution_span, tracing
from ferry._jobs.verdict import NoRetry, RetryAfter
from ferry._storable import storable_message
from ferry.drivers.capabilities import INTROSPECT, SLOTS, offered
from ferry.drivers.failures import failure_record
from ferry.drivers.protocol import (
    AckOptions,
    ClaimedJob,
    JobDriver,
    JobError,
    NackOptions,
    NackOutcome,
    Progress,
)
from ferry.errors import FerryError

logger = logging.getLogger("ferry.jobs")

DEFAULT_TIMEOUT_GRACE_MS = 5_000
"""How long a body may take to stop after its signal aborts before it is abandoned."""

BUSY_RETRY_MS = 250
"""How much later a run waiting on a busy concurrency slot is offered again."""

_ABANDON_ON = frozenset({"X_TIMEOUT", "X_LEASE_LOST", "X_CANCELLED"})
"""Abort reasons after which execute_job itself stops waiting (drain has its own deadline)."""
_PROGRESS = "report progress(current, total) as whole numbers from 0 to 2**63 - 1"

_LEASE_LOST_FIX = (
    "check this worker's connection to the store (and its CPU: a stalled loop renews "
    "nothing); alert on job_leases_lost_total — see docs/ops/runbooks/lease-lost.md"
)


async def execute_job(
    claimed: ClaimedJob,
    *,
    driver: JobDriver,
    worker_id: str,
    lease_ms: int,
    parent_signal: AbortSignal | None = None,
    observer: ExecutionObserver | None = None,
    resolve: Callable[[str], JobDefinition[Any, Any] | None] = resolve_job,
    timeout_grace_ms: int = DEFAULT_TIMEOUT_GRACE_MS,
    heartbeat_interval_ms: int | None = None,
    settler: Settler | None = None,
    caps: Caps | None = None,
    leases: LeaseKeeper | None = None,
    threads: ThreadPool | None = None,
) -> ExecutionReport:
    """Run one claimed attempt to a verdict and settle it through the driver (or through
    ``settler``, e.g. a worker's batch that settles many runs in one statement).

    ``leases`` renews the run's lease while its body runs (a worker passes the one keeper
    renewing all its runs); without it the run gets a keeper of its own. ``threads`` runs
    a sync body and sync step functions (a worker passes its pool). A caller that stops
    waiting (cancelled) abandons the attempt: nothing of it settles, its lease lapses."""
    own_keeper = leases is None
    keeper = leases or LeaseKeeper(
        driver,
        worker_id=worker_id,
        lease_ms=lease_ms,
        interval_ms=heartbeat_interval_ms or max(lease_ms // 3, 1),
        clock=driver.clock,
    )
    execution = Execution(
        claimed,
        driver=driver,
        settler=settler or driver,
        worker_id=worker_id,
        lease_ms=lease_ms,
        parent_signal=parent_signal,
        observer=observer or ExecutionObserver(),
        timeout_grace_ms=timeout_grace_ms,
        keeper=keeper,
        caps=caps,
        threads=threads or shared_pool(),
    )
    report = execution.start(resolve(claimed.name))
    try:
        return await asyncio.shield(report)
    except asyncio.CancelledError:
        execution.abandon()
        raise
    finally:
        if own_keeper:
            await keeper.close()


class Settler(Protocol):
    """Where an attempt's verdict lands: the driver's ``ack``/``nack`` (fenced, answering
    whether it landed)."""

    async def ack(self, job_id: str, options: AckOptions) -> bool: ...

    async def nack(self, job_id: str, options: NackOptions) -> bool: ...


class Execution:
    """One attempt from its claim to its settle; also the ``LeaseHolder`` of its run.

    ``start`` runs it in *one* task, the body awaited inside it (so ``current_task()``,
    ``asyncio.timeout`` and context variables in the body are the run's own), and answers
    the ``report`` future, resolved once the attempt's settle is answered. A body that
    outlives a self-ending abort's grace period (a timeout, a lost lease, a cancel) is given
    up: the grace timer's task settles the attempt without it and cancels it. ``abandon``
    (a drain's deadline, a caller that stops waiting) settles nothing.
    """

    __slots__ = (
        "_abandoned",
        "_begun",
        "_definition",
        "_given_up",
        "_grace",
        "_lapse_reported",
        "_lease",
        "_lost",
        "_parsed",
        "_refused_step",
        "caps",
        "claimed",
        "clock",
        "driver",
        "keeper",
        "lease_ms",
        "observer",
        "progress",
        "report",
        "settler",
        "signal",
        "started_ms",
        "task",
        "threads",
        "timeout_grace_ms",
        "worker_id",
    )

    def __init__(
        self,
        claimed: ClaimedJob,
        *,
        driver: JobDriver,
        settler: Settler,
        worker_id: str,
        lease_ms: int,
        parent_signal: AbortSignal | None,
        observer: ExecutionObserver,
        timeout_grace_ms: int,
        keeper: LeaseKeeper,
        caps: Caps | None,
        threads: ThreadPool,
    ) -> None:
        self.claimed = claimed
        self.threads = threads
        self.driver = driver
        self.settler = settler
        self.clock = driver.clock
        self.worker_id = worker_id
        self.lease_ms = lease_ms
        self.signal = AbortSignal(parent_signal)
        self.observer = observer
        self.timeout_grace_ms = timeout_grace_ms
        self.keeper = keeper
        self.caps = caps
        self.started_ms = self.clock.now_ms()
        self.progress: Progress | None = None
        """What the body last reported through ``progress(current, total)``."""
        self._grace: asyncio.Task[None] | None = None
        self._lease: HeldLease | None = None
        """The lease the keeper renews (and, once the body ended, watches until the settle
        answers) for this run."""
        self._lapse_reported = False
        """This attempt's lost lease was logged and counted: a lapse counts once."""
        self._begun = False
        """``execute`` has begun (and checked the claim's lease first thing)."""
        self._lost: FerryError | None = None
        """Why this attempt's lease is known lost (its window closed, or this worker claimed
        the run again): nothing of it is settled from then on."""
        self._refused_step: str | None = None
        """The step whose write the fence refused, if one was."""
        self._definition: JobDefinition[Any, Any] | None = None
        self._parsed: Any = None
        self._given_up = False
        """The grace period after a self-ending abort ran out: the grace task settles."""
        self._abandoned = False
        """Nobody waits for the attempt any more: nothing of it settles."""
        self.report: asyncio.Future[ExecutionReport]
        self.task: asyncio.Task[None]

    @property
    def job_id(self) -> str:
        return self.claimed.id

    def start(self, definition: JobDefinition[Any, Any] | None) -> asyncio.Future[ExecutionReport]:
        """Run the attempt in a task of its own; answers ``report``."""
        loop = asyncio.get_running_loop()
        self.report = loop.create_future()
        self.task = loop.create_task(self._run(definition))
        return self.report

    def abandon(self) -> None:
        """Stop waiting for the attempt: nothing of it settles (its lease lapses and the
        attempt counts), the body is cancelled and ``report`` is cancelled."""
        self._abandoned = True
        self.task.cancel()
        if self._grace is not None:
            self._grace.cancel()
        if self._lease is not None:
            self.keeper.drop(self._lease)
            self._lease = None
        if not self.report.done():
            self.report.cancel()
        self.signal.detach()

    async def _run(self, definition: JobDefinition[Any, Any] | None) -> None:
        try:
            if tracing():
                with execution_span(self.claimed) as record_outcome:
                    report = await self.execute(definition)
                    record_outcome(report)
            else:
                report = await self.execute(definition)
        except asyncio.CancelledError:
            if not (self._abandoned or self._given_up):
                self.abandon()  # cancelled from outside (the loop closing): settle nothing
            return
        except Exception as crashed:  # a bug: the worker logs it (jobs.worker.execution-crashed)
            self._end(crashed)
            return
        self._end(report)

    def _end(self, outcome: ExecutionReport | BaseException) -> None:
        """Answer ``report`` (once) and let go of the worker's signal."""
        self.signal.detach()  # the worker's signal keeps nothing of a run that ended
        if self.report.done():
            return
        if isinstance(outcome, BaseException):
            self.report.set_exception(outcome)
        else:
            self.observer.execution_finished(outcome)
            self.report.set_result(outcome)

    def report_progress(self, current: int, total: int) -> None:
        """The ``progress`` a body receives."""
        self.progress = Progress(
            bounded_int(current, field="progress current", low=0, high=RUN_ID_MAX, fix=_PROGRESS),
            bounded_int(total, field="progress total", low=0, high=RUN_ID_MAX, fix=_PROGRESS),
        )

    async def execute(self, definition: JobDefinition[Any, Any] | None) -> ExecutionReport:
        claimed = self.claimed
        self._begun = True
        if claimed.lease_expires_at_ms <= self.clock.now_ms():
            return self._lapsed_on_arrival()
        if definition is None:
            error = FerryError(
                "X_JOB_UNKNOWN",
                f'run {claimed.id} is of job "{claimed.name}", which this worker does not declare',
                "deploy a worker that imports the job, or rename the job back",
            )
            return await self._nack("deferred", error, self.clock.now_ms() + self.lease_ms)
        try:
            # The stored JSON text is validated as it is: no decoded dict in between.
            parsed = definition.input_model.model_validate_json(claimed.payload_json)
        except ValidationError as invalid:
            error = FerryError(
                "X_VALIDATION",
                f'stored input of run {claimed.id} no longer matches job "{claimed.name}"'
                f"'s schema: {invalid.error_count()} error(s), first: "
                f"{invalid.errors()[0]['msg']}",
                "retry the run after making the schema accept old payloads",
            )
            report = await self._nack("dead", error)
            await self._settled(definition, report, None, None)
            return report
        if definition.concurrency is not None and claimed.concurrency_key is not None:
            busy = await self._take_slot(definition, claimed.concurrency_key)
            if busy is not None:
                if busy.outcome == "dead":
                    await self._settled(definition, busy, parsed, None)
                return busy
        if self.caps is not None:
            capped = await self._take_caps(self.caps)
            if capped is not None:
                return capped
        return await self._run_body(definition, parsed)

    async def _take_caps(self, caps: Caps) -> ExecutionReport | None:
        """None when every cap has room; otherwise the run is deferred, uncounted. The
        deferring settle gives back whatever slots this run took before the full one."""
        claimed = self.claimed
        slots = caps.slots_for(tenant=claimed.tenant, queue=claimed.queue)
        leases = offered(self.driver, SLOTS)
        for key, limit in slots:
            if leases is None or not await leases.acquire(
                key, holder=claimed.id, limit=limit, ttl_ms=self.lease_ms
            ):
                error = FerryError(
                    "X_CAP_REACHED",
                    f'run {claimed.id} of job "{claimed.name}" waits: cap "{key}" already '
                    f"holds {limit} running run(s)",
                    "nothing to fix — it runs when the cap has room; raise the cap if it "
                    "is too tight",
                )
                return await self._nack("deferred", error, self.clock.now_ms() + BUSY_RETRY_MS)
        return None

    async def _take_slot(
        self, definition: JobDefinition[Any, Any], key: str
    ) -> ExecutionReport | None:
        """None when a slot is ours; otherwise the settled report for a busy key."""
        concurrency = definition.concurrency
        assert concurrency is not None
        if self.claimed.slot_held:
            return None  # taken in the claim statement: one round trip fewer per keyed run
        leases = offered(self.driver, SLOTS)
        if leases is None:
            error = unenforceable([definition.name], self.driver.name)
            return await self._nack("deferred", error, self.clock.now_ms() + self.lease_ms)
        if await leases.acquire(
            key, holder=self.claimed.id, limit=concurrency.limit, ttl_ms=self.lease_ms
        ):
            return None
        error = FerryError(
            "X_CONCURRENCY_BUSY",
            f'job "{definition.name}" already runs {concurrency.limit} at once under key "{key}"',
            'wait for the running ones, or declare when_busy="wait" to defer instead',
        )
        if concurrency.when_busy == "fail":
            return await self._nack("dead", error)
        return await self._nack("deferred", error, self.clock.now_ms() + BUSY_RETRY_MS)

    async def _run_body(self, definition: JobDefinition[Any, Any], parsed: Any) -> ExecutionReport:
        arguments = self._arguments(definition, parsed)
        coroutine: Coroutine[Any, Any, Any]
        if definition.sync:  # on the pool's thread; cancelling this task strands the thread
            if "step" in arguments:
                arguments["step"] = SyncStep(arguments["step"], asyncio.get_running_loop())
            coroutine = self.threads.run(partial(definition.body, **arguments))
        else:
            coroutine = cast("Coroutine[Any, Any, Any]", definition.body(**arguments))
        timer = (
            asyncio.create_task(self._time_out(definition.timeout_ms))
            if definition.timeout_ms is not None
            else None
        )
        self._definition, self._parsed = definition, parsed  # the grace task's, if it must
        self.signal.add_listener(self._aborted)
        lease = self._lease = self.keeper.hold(self, expires_at_ms=self.claimed.lease_expires_at_ms)
        result: Any = None
        error: BaseException | None = None
        try:
            result = await coroutine
        except asyncio.CancelledError as cancelled:
            if self._abandoned or self._given_up:
                raise  # whoever gave up on the body decides (or nobody does)
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this task was cancelled from outside: _run abandons it
            error = cancelled  # the body's own: what it awaited was cancelled
        except Exception as raised:
            error = raised
        finally:
            self.signal.remove_listener(self._aborted)
            if timer is not None:
                timer.cancel()
            if self._grace is not None and not self._given_up:
                self._grace.cancel()
        if self._given_up or self._abandoned:
            # A body that swallowed the cancel and ended after all: it was given up on, so
            # its ending changes nothing (the grace task, or nobody, settles).
            raise asyncio.CancelledError
        # From here the lease is renewed no more, but watched until the settle answers.
        await self.keeper.stop_renewing(lease)
        try:
            return await self._verdict(definition, parsed, result, error)
        finally:
            self._let_go()

    def _let_go(self) -> None:
        """Stop renewing and watching the lease: the settle answered, or none is coming."""
        if self._lease is not None:
            self.keeper.drop(self._lease)
            self._lease = None  # the lease points back here: no cycle left for the collector

    def _arguments(self, definition: JobDefinition[Any, Any], parsed: Any) -> dict[str, Any]:
        """The keyword arguments the body declares, and only those (a body that takes only
        ``input`` costs no step store, context or progress callback)."""
        claimed = self.claimed
        final_attempt = claimed.attempt >= claimed.max_attempts
        arguments: dict[str, Any] = {}
        for name in definition.body_parameters:
            if name == "input":
                arguments[name] = parsed
            elif name == "step":
                arguments[name] = Step(
                    job_name=claimed.name,
                    job_id=claimed.id,
                    worker_id=self.worker_id,
                    driver=self.driver,
                    signal=self.signal,
                    threads=self.threads,
                    observer=self.observer,
                    fenced=self.step_refused,
                )
            elif name == "ctx":
                arguments[name] = JobContext(
                    signal=self.signal,
                    job_id=claimed.id,
                    name=claimed.name,
                    queue=claimed.queue,
                    attempt=claimed.attempt,
                    max_attempts=claimed.max_attempts,
                    final_attempt=final_attempt,
                    tenant=claimed.tenant,
                    actor=claimed.actor,
                    idempotency_key=claimed.idempotency_key,
                    worker_id=self.worker_id,
                )
            elif name == "progress":
                arguments[name] = self.report_progress
            elif name == "final_attempt":
                arguments[name] = final_attempt
            elif name == "attempt":
                arguments[name] = claimed.attempt
        return arguments

    def _aborted(self, reason: FerryError) -> None:
        if reason.code in _ABANDON_ON and self._grace is None:  # a drain: the worker's deadline
            self._grace = asyncio.create_task(self._end_after_grace())

    async def _verdict(
        self,
        definition: JobDefinition[Any, Any],
        parsed: Any,
        returned: Any,
        error: BaseException | None,
    ) -> ExecutionReport:
        if error is None:
            try:
                result = stored_result(
                    definition, returned, max_bytes=self.driver.max_payload_bytes
                )
            except NoRetry as not_storable:  # the run is dead at once: see stored_result
                return await self._failed(definition, parsed, not_storable)
            report = await self._settle(
                AckOptions(self.worker_id, result, self._elapsed(), self.progress),
                "completed",
                None,
            )
            await self._settled(definition, report, parsed, returned)
            return report
        if isinstance(error, Parked):
            return await self._nack("sleep", None, error.wake_at_ms)
        if self.signal.aborted:
            # The verdict is read off the signal, not off what the body raised.
            return await self._after_abort(definition, parsed, abandoned=False)
        if isinstance(error, FerryError):
            return await self._failed(definition, parsed, error)
        logger.warning(
            "jobs.attempt.failed",
            extra={"job_id": self.claimed.id, "job": definition.name},
            exc_info=error,
        )
        return await self._failed(
            definition,
            parsed,
            cause=error,
            error=FerryError(
                "X_JOB_FAILED",
                f'job "{definition.name}" raised {type(error).__name__}: {error}',
                "see its traceback with `ferry jobs show` (or in the worker log); the run "
                "retries while attempts remain",
            ),
        )

    async def _after_abort(
        self, definition: JobDefinition[Any, Any], parsed: Any, *, abandoned: bool
    ) -> ExecutionReport:
        reason = self.signal.reason
        assert reason is not None
        if reason.code == "X_DRAINING":
            return await self._nack("interrupted", reason)
        if reason.code == "X_LEASE_LOST":
            if self._refused_step is not None:
                return await self._superseded(step=self._refused_step)
            return self._report("lease-lost", reason, landed=False)
        if reason.code == "X_CANCELLED":
            report = await self._nack("cancelled", reason)
            await self._settled(definition, report, parsed, None)
            return report
        if abandoned:
            logger.error(
                "jobs.attempt.abandoned",
                extra={"job_id": self.claimed.id, "job": definition.name, "code": reason.code},
            )
        return await self._failed(definition, parsed, reason)

    async def _failed(
        self,
        definition: JobDefinition[Any, Any],
        parsed: Any,
        error: FerryError,
        cause: BaseException | None = None,
    ) -> ExecutionReport:
        """The attempt failed with ``error`` (which wraps ``cause``, the body's own
        exception, when there is one): retry or dead, its failure record kept."""
        claimed = self.claimed
        failure = failure_record(
            attempt=claimed.attempt,
            code=error.code,
            at_ms=self.clock.now_ms(),
            traceback=_traceback_of(cause or error),
        )
        if claimed.attempt >= claimed.max_attempts or isinstance(error, NoRetry):
            logger.error(
                "jobs.run.dead",
                extra={"job_id": claimed.id, "job": claimed.name, "code": error.code},
            )
            report = await self._nack("dead", error, failure=failure)
            await self._settled(definition, report, parsed, None)
            return report
        delay = (
            error.delay_ms
            if isinstance(error, RetryAfter)
            else definition.retry.delay_ms(claimed.attempt)
        )
        logger.warning(
            "jobs.run.retrying",
            extra={
                "job_id": claimed.id,
                "job": claimed.name,
                "code": error.code,
                "attempt": claimed.attempt,
                "delay_ms": delay,
            },
        )
        return await self._nack("retry", error, self.clock.now_ms() + delay, failure=failure)

    async def _nack(
        self,
        outcome: NackOutcome,
        error: FerryError | None,
        run_at_ms: int | None = None,
        *,
        failure: str | None = None,
    ) -> ExecutionReport:
        return await self._settle(
            NackOptions(
                worker_id=self.worker_id,
                outcome=outcome,
                run_at_ms=run_at_ms,
                # The body's own exception text: kept storable, or the settle itself would fail.
                error=JobError(error.code, storable_message(error.message))
                if error is not None
                else None,
                progress=self.progress,
                failure=failure,
            ),
            REPORTED[outcome],
            error,
        )

    async def _settle(
        self,
        verdict: AckOptions | NackOptions,
        outcome: ExecutionOutcome,
        error: FerryError | None,
    ) -> ExecutionReport:
        """Send the attempt's verdict (fenced on this worker) and report how it went: as
        ``outcome`` when it landed, ``superseded`` when the fence refused it, ``lease-lost``
        when it could not be sent at all — or ``lease-lost``, unsent, when the lease is known
        lost before it goes: a settle sent past the window could land only on a lease this
        worker took since, by claiming the run again, and would settle that attempt's run
        with this one's verdict."""
        if self._lease is not None:
            self.keeper.lapsed(self._lease)  # a window that closed unnoticed is lost now
        if self._lost is not None:
            self._let_go()
            return self._report("lease-lost", self._lost, landed=False)
        try:
            if isinstance(verdict, AckOptions):
                landed = await self.settler.ack(self.claimed.id, verdict)
            else:
                landed = await self.settler.nack(self.claimed.id, verdict)
        except Exception as failure:
            return self._unsettled(failure)
        finally:
            self._let_go()  # answered: the lease's window is no longer watched
        if not landed:
            return await self._superseded(verdict=outcome)
        return self._report(outcome, error, landed=True)

    def _lapsed_on_arrival(self) -> ExecutionReport:
        """The claim answered after the lease it took had lapsed (the worker's own clock set
        that lease when it sent the claim): a claim held up on its way — a partition, a
        stalled server — may answer a run another worker runs already, or will. So the body
        is not started; the lapse is counted, nothing is settled (no write of this attempt
        could land) and the run is redelivered like any lapsed run."""
        self._lapse(seen_by="claim", lease_expired_at_ms=self.claimed.lease_expires_at_ms)
        reason = FerryError(
            "X_LEASE_LOST",
            f"worker {self.worker_id}'s claim of run {self.claimed.id} attempt "
            f"{self.claimed.attempt} answered after its lease had lapsed; the body was not "
            "started and the run is redelivered",
            _LEASE_LOST_FIX,
        )
        return self._report("lease-lost", reason, landed=False)

    def _unsettled(self, failure: Exception) -> ExecutionReport:
        """The settle raised (the store unreachable, a lock held past its timeout): nothing
        renews the lease any more, so it lapses and the run is redelivered — a lost lease,
        counted now rather than when nobody is left to notice."""
        reason = FerryError(
            "X_LEASE_LOST",
            f"worker {self.worker_id} could not settle run {self.claimed.id} "
            f"({type(failure).__name__}: {failure}); its lease lapses and the run is "
            "redelivered",
            _LEASE_LOST_FIX,
        )
        self._lapse(seen_by="settle-failed", error=f"{type(failure).__name__}: {failure}")
        return self._report("lease-lost", reason, landed=False)

    async def _superseded(
        self, *, step: str | None = None, verdict: ExecutionOutcome | None = None
    ) -> ExecutionReport:
        """The fence refused a write — the settle (carrying ``verdict``), or ``step``'s
        record: the run is no longer this worker's. Reported as ``superseded``, whatever
        the verdict would have been; the lease counts as lost unless its lapse already did."""
        write = "settle" if step is None else f'step "{step}"'
        holder, state = await self._holder_now()
        self._lapse(
            seen_by="settle" if step is None else "step",
            refused=write,
            holder=holder,
            holder_state=state,
            verdict=verdict,
        )
        now_held = f"held by {holder}" if holder else f"{state or 'in an unknown state'}"
        reason = FerryError(
            "X_LEASE_LOST",
            f"the {write} of run {self.claimed.id} attempt {self.claimed.attempt} was refused: "
            f"worker {self.worker_id} no longer holds the run (now {now_held})",
            _LEASE_LOST_FIX,
        )
        return self._report("superseded", reason, landed=False)

    async def _holder_now(self) -> tuple[str | None, str | None]:
        """Who holds the run now (None when nobody's lease is live) and its state, read from
        storage where the driver can tell (``introspect``) — else, or when that read fails
        too, (None, None): the line is written anyway, without the holder."""
        introspect = offered(self.driver, INTROSPECT)
        if introspect is None:
            return None, None
        try:
            run = await introspect.get_run(self.claimed.id)
        except Exception:
            return None, None
        if run is None:
            return None, None
        live = (
            run.summary.state == "running"
            and run.lease_expires_at_ms is not None
            and run.lease_expires_at_ms > self.clock.now_ms()
        )
        return (run.locked_by if live else None), run.summary.state

    def _lapse(self, *, seen_by: str, **facts: object) -> None:
        """Log this attempt's lost lease (``jobs.lease.lost``, error) and count it on
        ``job_leases_lost_total`` — the count once per lapse, however many ways the worker
        learns of it; a later refused write is logged again, with who holds the run now."""
        counted = not self._lapse_reported
        self._lapse_reported = True
        logger.error(
            "jobs.lease.lost",
            extra={
                "job_id": self.claimed.id,
                "job": self.claimed.name,
                "queue": self.claimed.queue,
                "attempt": self.claimed.attempt,
                "worker_id": self.worker_id,
                "seen_by": seen_by,
                "counted": counted,
                **{k: v for k, v in facts.items() if v is not None},
            },
        )
        if counted:
            self.observer.lease_lost(self.claimed.name, self.claimed.id, self.claimed.queue)

    async def _settled(
        self,
        definition: JobDefinition[Any, Any],
        report: ExecutionReport,
        parsed: Any,
        result: Any,
    ) -> None:
        """``on_settled`` once per ending — only for a settle that landed."""
        if definition.on_settled is None or not report.landed:
            return
        outcome = {"completed": "completed", "cancelled": "cancelled"}.get(report.outcome, "failed")
        settled: Settled[Any, Any] = Settled(
            outcome=outcome,  # type: ignore[arg-type]
            job_id=report.job_id,
            attempt=report.attempt,
            input=parsed,
            result=result,
            code=report.code,
            message=report.message,
        )
        try:
            returned = definition.on_settled(settled)
            if inspect.isawaitable(returned):
                await returned
        except Exception:
            logger.exception(
                "jobs.on_settled.failed", extra={"job_id": report.job_id, "job": report.job_name}
            )

    async def _time_out(self, timeout_ms: int) -> None:
        await self.clock.sleep_ms(timeout_ms)
        self.signal.abort(
            FerryError(
                "X_TIMEOUT",
                f'job "{self.claimed.name}" run {self.claimed.id} attempt '
                f"{self.claimed.attempt} ran past its {timeout_ms} ms timeout",
                "pass ctx.signal to slow calls, or raise the job's timeout",
            )
        )

    async def _end_after_grace(self) -> None:
        """Once the body has had its grace period after the abort, give it up: settle the
        attempt without it (it hears a cancel, and whatever it does next changes nothing)."""
        await self.clock.sleep_ms(self.timeout_grace_ms)
        self._given_up = True
        self.task.cancel()
        try:
            assert self._definition is not None
            if self._lease is not None:
                await self.keeper.stop_renewing(self._lease)
            report = await self._after_abort(self._definition, self._parsed, abandoned=True)
        except Exception as crashed:
            self._end(crashed)
            return
        finally:
            self._let_go()
        self._end(report)

    def heartbeat_failed(self, error: str) -> None:
        logger.warning(
            "jobs.heartbeat.failed",
            extra={"job_id": self.claimed.id, "job": self.claimed.name, "error": error},
        )
        self.observer.heartbeat_failed(
            self.claimed.name, self.claimed.id, self.claimed.queue, error
        )

    def lease_lost(self) -> None:
        """A whole window passed with no renewal landing (the body may still run, or its
        settle be in flight): counted now, and the body told to stop."""
        if not self._lapse_reported:
            self._lapse(seen_by="renewal", window_ms=self.lease_ms)
        self._lose(
            FerryError(
                "X_LEASE_LOST",
                f"worker {self.worker_id} renewed no lease on run {self.claimed.id} for "
                f"{self.lease_ms} ms; the queue may hand it to another worker",
                _LEASE_LOST_FIX,
            )
        )

    def retaken(self, attempt: int) -> None:
        """This worker's own claim took the run again (as ``attempt``) while this attempt
        still runs. A claim takes no run whose lease is live, so the store had let this
        attempt's lease lapse before the keeper noticed (renewals slower than the lease, or
        failing): the lease is lost now, counted, the body told to stop, and it is renewed
        no more — a renewal or settle of it would land on the new attempt's lease, which
        the fence, on the claimer (this same worker), cannot tell from this one's.

        An attempt that has ended has nothing left to lose; one that has not begun finds its
        claim lapsed as it begins (that claim took the run again because, on this worker's
        clock, the lease had lapsed), and says so itself."""
        if not self._begun or self.report.done():
            return
        self._lapse(seen_by="reclaim", claimed_again_as=attempt)
        if self._lease is not None:
            self.keeper.drop(self._lease)
        self._lose(
            FerryError(
                "X_LEASE_LOST",
                f"worker {self.worker_id} claimed run {self.claimed.id} again (attempt "
                f"{attempt}) while attempt {self.claimed.attempt} still ran: the store had "
                "let that attempt's lease lapse",
                _LEASE_LOST_FIX,
            )
        )

    def _lose(self, reason: FerryError) -> None:
        """The lease is gone for ``reason``: nothing of this attempt settles from now on,
        and the body is told to stop."""
        if self._lost is None:
            self._lost = reason
        self.signal.abort(reason)

    def step_refused(self, step_name: str) -> None:
        """The fence refused a step's write: another worker holds the run. The body is told
        to stop; the attempt ends ``superseded`` (``_after_abort``)."""
        self._refused_step = step_name
        self.signal.abort(
            FerryError(
                "X_LEASE_LOST",
                f'step "{step_name}" of run {self.claimed.id} was refused: worker '
                f"{self.worker_id} no longer holds the run",
                _LEASE_LOST_FIX,
            )
        )

    def cancel_requested(self) -> None:
        """An operator cancelled the run while it ran: stop the body, settle it cancelled."""
        self.signal.abort(
            FerryError(
                "X_CANCELLED",
                f'run {self.claimed.id} of job "{self.claimed.name}" was cancelled by an '
                "operator while it ran",
                f"retry it with `ferry jobs retry {self.claimed.id}` if that was a mistake",
            )
        )

    def _elapsed(self) -> int:
        return self.clock.now_ms() - self.started_ms

    def _report(
        self, outcome: ExecutionOutcome, error: FerryError | None, landed: bool
    ) -> ExecutionReport:
        return ExecutionReport(
            job_id=self.claimed.id,
            job_name=self.claimed.name,
            queue=self.claimed.queue,
            attempt=self.claimed.attempt,
            outcome=outcome,
            code=error.code if error is not None else None,
            message=error.message if error is not None else None,
            duration_ms=self._elapsed(),
            landed=landed,
        )


def unenforceable(job_names: list[str], driver_name: str) -> FerryError:
    """The refusal for concurrency a driver without fleet slots cannot hold (the spec's
    own code, kept apart from ``X_DRIVER_CAPABILITY`` as the spec says)."""
    names = ", ".join(f'"{n}"' for n in job_names)
    return FerryError(
        "X_JOB_CONCURRENCY_UNENFORCEABLE",
        f'the {driver_name} driver offers no fleet slots (capability "slots", the spec\'s '
        f"LeaseStore), so it cannot hold the concurrency declared by job(s) {names} across "
        "the fleet",
        "use a driver that offers slots (postgres, sqlite, redis, memory), or remove "
        "concurrency= from those jobs",
    )


def _traceback_of(error: BaseException) -> str:
    """What a failure record keeps of ``error``: its whole traceback (the chain included),
    or, for a refusal that was never raised (a timeout read off the signal), its words."""
    if error.__traceback__ is None and isinstance(error, FerryError):
        return f"{error.code}: {error.message}"
    return "".join(traceback.format_exception(error))
