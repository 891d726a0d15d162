"""One dispatch round: each task's due occurrences, its catch-up policy, then the enqueue.

The order inside a round is the safety argument. An occurrence's jobs are enqueued first
(with occurrence-scoped keys, so a second enqueue of it resolves to the same runs), and
only once that enqueue has landed does the task's last-tick row move past it. A crash in
between re-fires the occurrence late; nothing in the order can skip it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ferry._jobs.tracing import producer_span
from ferry._leadership import LeaseLeader
from ferry._metrics.scheduler_catalog import SchedulerMetrics
from ferry._scheduler.store import SchedulerStore, TaskTick
from ferry.drivers.protocol import EnqueueResult, JobDriver
from ferry.errors import FerryError
from ferry.tasks._declaration import TaskHandle
from ferry.tasks._occurrences import occurrences

logger = logging.getLogger("ferry.scheduler")


@dataclass(frozen=True, slots=True)
class Fired:
    """One occurrence a round dispatched, and the runs its entries resolved to."""

    task: str
    occurrence_ms: int
    fired_at_ms: int
    results: tuple[EnqueueResult, ...]


@dataclass
class RoundReport:
    """What one round did: the fires, the tasks held back by a refusal, and whether the
    lease turned out lost mid-round (``fenced``: the round stopped there)."""

    now_ms: int
    fired: list[Fired] = field(default_factory=list)
    refused: dict[str, Exception] = field(default_factory=dict)
    fenced: bool = False


def planned_fires(task: TaskHandle, checked_through_ms: int, now_ms: int) -> list[tuple[int, int]]:
    """``(occurrence, checked_through)`` pairs one round fires for ``task``, in order.

    ``skip`` fires the latest due occurrence and ``run-once`` the earliest, each passing
    over the rest of the gap; ``run-all`` fires every due one, ``max_catch_up`` a round.
    """
    due = occurrences(task.cron, task.tz, checked_through_ms, now_ms)
    if not due:
        return []
    if task.catch_up == "skip":
        return [(due[-1], due[-1])]
    if task.catch_up == "run-once":
        return [(due[0], due[-1])]
    return [(occurrence, occurrence) for occurrence in due[: task.max_catch_up]]


class Dispatcher:
    """Fires the due occurrences of ``tasks`` for the node holding the lease."""

    def __init__(
        self,
        *,
        driver: JobDriver,
        store: SchedulerStore,
        tasks: Iterable[TaskHandle],
        leader: LeaseLeader,
        first_seen_ms: int | None = None,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        self._driver = driver
        self._store = store
        self._tasks = tuple(tasks)
        self._leader = leader
        self._metrics = metrics
        if metrics is not None:
            metrics.serve_tasks(task.name for task in self._tasks)
        # Where a task with no row starts counting; the round's own instant when None, so a
        # newly deployed task fires from its next occurrence rather than from the past.
        self._first_seen_ms = first_seen_ms

    async def dispatch_round(self, now_ms: int) -> RoundReport:
        """Fire every due occurrence up to ``now_ms`` by each task's catch-up policy."""
        report = RoundReport(now_ms)
        ticks = await self._store.ticks()
        paused = await self._store.paused_tasks()
        for task in self._tasks:
            if not await self._dispatch_task(task, ticks.get(task.name), paused, report):
                break  # fenced: another node leads now
        return report

    async def _dispatch_task(
        self,
        task: TaskHandle,
        tick: TaskTick | None,
        paused: Mapping[str, int],
        report: RoundReport,
    ) -> bool:
        """Fire ``task``'s planned occurrences; False when the lease turned out lost."""
        now_ms = report.now_ms
        start = self._first_seen_ms if self._first_seen_ms is not None else now_ms
        through = tick.checked_through_ms if tick is not None else min(start, now_ms)
        if task.name in paused:
            # Paused means not fired, then or later: the occurrences it covers are passed
            # over, so a resume does not release a burst of stale fires.
            passed_over = tick is None or occurrences(task.cron, task.tz, through, now_ms)
            return not passed_over or await self._record(TaskTick(task.name, now_ms), report)
        if tick is None and not await self._record(TaskTick(task.name, through), report):
            return False
        for occurrence, checked_through in planned_fires(task, through, now_ms):
            try:
                # The runs an occurrence fires are traced under one span of the tick.
                with producer_span(
                    f"jobs.task.{task.name}",
                    {"task.name": task.name, "task.occurrence_ms": occurrence},
                ):
                    requests = task.dispatch_requests(
                        occurrence, max_payload_bytes=self._driver.max_payload_bytes
                    )
                results = await self._driver.enqueue_many(requests) if requests else []
            except Exception as refused:
                # Held back, not skipped: the row stays put and the next round retries it.
                # Caught per task, so one task's broken enqueue= never stalls the others.
                logger.error(
                    "jobs.scheduler.dispatch-refused",
                    exc_info=not isinstance(refused, FerryError),
                    extra={
                        "task": task.name,
                        "occurrence_ms": occurrence,
                        "code": getattr(refused, "code", type(refused).__name__),
                        "reason": getattr(refused, "message", str(refused)),
                    },
                )
                report.refused[task.name] = refused
                return True
            if not await self._record(
                TaskTick(task.name, checked_through, occurrence, now_ms), report
            ):
                return False
            report.fired.append(Fired(task.name, occurrence, now_ms, tuple(results)))
            if self._metrics is not None:
                self._metrics.dispatched(task.name)
            logger.info(
                "jobs.scheduler.dispatched",
                extra={
                    "task": task.name,
                    "occurrence_ms": occurrence,
                    "late_ms": now_ms - occurrence,
                    "runs": len(results),
                },
            )
        return True

    async def _record(self, tick: TaskTick, report: RoundReport) -> bool:
        """Write ``tick`` if this node still leads; a fenced write ends the round."""
        lease = self._leader.lease
        now = self._driver.clock.now_ms()
        if lease is not None and await self._store.record_tick(tick, lease=lease, now_ms=now):
            return True
        report.fenced = True
        return False
