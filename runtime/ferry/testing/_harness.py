"""A test harness: a frozen clock, a driver, and a worker you drive by hand.

The worker is a real ``JobWorker`` cranked by ``run_due``: the same claim (keyed slots
taken in it), execution and batched settle as in production, only never in a background
loop. ``run_jobs(job, input)`` enqueues and drains; ``drain()`` executes every run that is due,
fast-forwarding the clock through retry backoff and rate limit deferrals (both are the
runner's business, not the test's: a body records ``clock.now_ms()`` to see when it
started) but never through a ``step.sleep`` or a ``delay`` — those wait for
``clock.advance``, exactly as they would wait in production. ``drain()`` first fires the
declared tasks' occurrences the clock has passed, as a scheduler running all along would:
``clock.advance("3d")`` over a daily task enqueues three runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ferry._clock import FrozenClock
from ferry._jobs.declaration import JobHandle
from ferry._jobs.facade import set_job_driver
from ferry._jobs.observer import ExecutionObserver, ExecutionReport
from ferry._scheduler import Dispatcher, LeaseLeader, SchedulerStore, scheduler_leader
from ferry._worker import JobWorker
from ferry.drivers._memory import memory_job_driver
from ferry.drivers.capabilities import INTROSPECT, need
from ferry.drivers.protocol import EnqueueResult, JobDriver, RunFilter, RunSummary
from ferry.tasks._declaration import TaskHandle, declared_tasks
from ferry.tasks._occurrences import occurrences


@dataclass
class StepTrace:
    """How many times a step's function actually ran (replays from storage excluded)."""

    executions: int = 0


class _StepTraces(dict[str, StepTrace]):
    """``trace.steps[name]``; a step that never ran reads as zero executions."""

    def __missing__(self, name: str) -> StepTrace:
        return StepTrace()


@dataclass
class Trace(ExecutionObserver):
    """Everything the harness saw: step executions, attempt reports, runs in the queue."""

    steps: _StepTraces = field(default_factory=_StepTraces)
    reports: list[ExecutionReport] = field(default_factory=list)
    runs: list[RunSummary] = field(default_factory=list)
    deferred_by_rate: dict[str, int] = field(default_factory=dict)
    """Runs a claim deferred by their rate limit and that have not started since, by id:
    the instant each is due again."""

    def step_executed(self, job_name: str, job_id: str, step_name: str) -> None:
        self.steps.setdefault(step_name, StepTrace()).executions += 1

    def execution_finished(self, report: ExecutionReport) -> None:
        self.reports.append(report)
        self.deferred_by_rate.pop(report.job_id, None)

    def rate_limited(self, job_name: str, job_id: str, queue: str, until_ms: int) -> None:
        self.deferred_by_rate[job_id] = until_ms

    def enqueued(self, job: JobHandle[Any, Any] | str) -> list[RunSummary]:
        """Every run of ``job`` in the queue when the trace was last drained."""
        name = job if isinstance(job, str) else job.name
        return [run for run in self.runs if run.name == name]

    def outcomes(self, job: JobHandle[Any, Any] | str) -> list[str]:
        """The outcome of every attempt of ``job``, in order."""
        name = job if isinstance(job, str) else job.name
        return [report.outcome for report in self.reports if report.job_name == name]


class Harness:
    """A frozen clock, a driver on it, and a hand-cranked worker."""

    def __init__(
        self,
        *,
        driver: JobDriver | None = None,
        clock: FrozenClock | None = None,
        worker_id: str = "test-worker",
        lease_ms: int = 30_000,
        tasks: Iterable[TaskHandle] | None = None,
    ) -> None:
        self.clock = clock or FrozenClock()
        self.driver = driver or memory_job_driver(clock=self.clock)
        self.worker_id = worker_id
        self.lease_ms = lease_ms
        self.trace = Trace()
        self.tasks = list(tasks) if tasks is not None else None
        """The tasks ``drain()`` fires; ``None``: every task declared in the process."""
        self._scheduler: tuple[SchedulerStore, LeaseLeader] | None = None
        """The scheduler's store and this harness's hold on its lease, made at the first
        task round (a driver without leases and records is refused only if tasks fire)."""
        self._scheduler_started_ms = self._fired_through_ms = self.clock.now_ms()

    @contextmanager
    def installed(self) -> Iterator[Harness]:
        """Make this harness's driver the ambient one for the duration."""
        previous = set_job_driver(self.driver)
        try:
            yield self
        finally:
            set_job_driver(previous)

    async def run_jobs(
        self, job: JobHandle[Any, Any], input: Any | Mapping[str, Any]
    ) -> EnqueueResult:
        """Enqueue ``input`` for ``job`` through the facade, then drain."""
        with self.installed():
            result = await job.enqueue(input)
        await self.drain()
        return result

    async def run_due(self) -> int:
        """Execute one due run, if any (the first in claim order), to its settle: one turn
        of the worker, the clock untouched; answers how many ran (0 or 1). What a test
        steps through a fan-out with, one run at a time."""
        with self.installed():
            return await self._worker().run_due()

    async def drain(self, *, max_attempts: int = 10_000) -> Trace:
        """Execute every due run, fast-forwarding retry backoff, until nothing is due."""
        worker = self._worker()
        with self.installed():
            try:
                for _ in range(max_attempts):
                    await self._fire_due_tasks()
                    if await worker.run_due():
                        continue
                    retry_at = await self._next_retry_ms()
                    if retry_at is None:
                        break
                    self.clock.set(retry_at)
            finally:
                await worker.stop()  # its lease keeper and its threads end with the drain
        self.trace.runs = list(
            reversed(
                await need(self.driver, INTROSPECT, by="the test harness").list_runs(
                    RunFilter(limit=1_000_000)
                )
            )
        )
        return self.trace

    def _worker(self) -> JobWorker:
        return JobWorker(
            driver=self.driver,
            worker_id=self.worker_id,
            lease_ms=self.lease_ms,
            concurrency=1,
            observer=self.trace,
        )

    async def _fire_due_tasks(self) -> None:
        """One on-time dispatch round at every occurrence instant the clock has passed."""
        tasks = self.tasks if self.tasks is not None else declared_tasks()
        now = self.clock.now_ms()
        if not tasks or now <= self._fired_through_ms:
            return
        if self._scheduler is None:
            store = SchedulerStore(self.driver, by="the harness's scheduled tasks")
            self._scheduler = store, scheduler_leader(store, self.worker_id, self.driver)
        store, leader = self._scheduler
        await leader.acquire()
        dispatcher = Dispatcher(
            driver=self.driver,
            store=store,
            tasks=tasks,
            leader=leader,
            first_seen_ms=self._scheduler_started_ms,
        )
        instants = {
            instant
            for task in tasks
            for instant in occurrences(task.cron, task.tz, self._fired_through_ms, now)
        }
        for instant in sorted(instants):
            await dispatcher.dispatch_round(instant)
        self._fired_through_ms = now

    async def _next_retry_ms(self) -> int | None:
        """The earliest instant a queued run that failed or was deferred (by a busy slot
        or cap, or by its rate limit) becomes due."""
        waiting = await need(self.driver, INTROSPECT, by="the test harness").list_runs(
            RunFilter(state="queued", limit=1_000_000)
        )
        instants = [run.run_at_ms for run in waiting if run.last_error is not None]
        instants += self.trace.deferred_by_rate.values()
        return min(instants) if instants else None
