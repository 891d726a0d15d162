"""The scheduler's durable state, built once on the driver's leases and records.

The leader holds lease ``scheduler``; each task's last tick is a record of space
``scheduler-ticks``, written only under the leader's lease — the fence is checked in the
same statement or script as the write, so a node that lost leadership mid-round cannot
move state its successor already reads — and only ever forward (``advanced``); a paused
task is a record of space ``paused-tasks``. Every instant is a parameter, read by the
caller off the driver's clock, so a frozen clock drives the whole scheduler in tests.
Nothing of it lives in a scheduler process.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ferry.drivers.capabilities import LEASES, RECORDS, need
from ferry.drivers.protocol import JobDriver, JsonValue, Lease

SCHEDULER_LEASE = "scheduler"
"""The lease whose holder dispatches."""
TICKS = "scheduler-ticks"
PAUSED = "paused-tasks"


@dataclass(frozen=True, slots=True)
class TaskTick:
    """How far one task has been dispatched.

    Occurrences at or before ``checked_through_ms`` are dispatched or deliberately passed
    over (a catch-up policy or a pause); ``last_occurrence_ms`` is the latest one fired and
    ``last_fired_at_ms`` when (both ``None`` before the first fire).
    """

    task: str
    checked_through_ms: int
    last_occurrence_ms: int | None = None
    last_fired_at_ms: int | None = None


class SchedulerStore:
    """The leader lease, last ticks and paused tasks of the scheduler on ``driver``;
    ``X_DRIVER_CAPABILITY`` naming ``by`` on a driver without leases and records."""

    def __init__(self, driver: JobDriver, *, by: str = "the scheduler") -> None:
        self.leases = need(driver, LEASES, by=by)
        self._records = need(driver, RECORDS, by=by)
        self._clock = driver.clock

    async def leader(self, *, now_ms: int) -> Lease | None:
        """The unexpired leader lease, if any node holds one."""
        return await self.leases.read(SCHEDULER_LEASE, now_ms=now_ms)

    async def ticks(self) -> dict[str, TaskTick]:
        """Every task's last-tick state, by task name."""
        stored = await self._records.scan(TICKS, now_ms=self._clock.now_ms())
        return {task: _tick_of(task, value) for task, value in stored.items()}

    async def record_tick(self, tick: TaskTick, *, lease: Lease, now_ms: int) -> bool:
        """Move a task's state forward (never back) if ``lease`` still holds at ``now_ms``
        in its term; answers whether it landed."""
        current = await self._records.get(TICKS, tick.task, now_ms=now_ms)
        merged = advanced(_tick_of(tick.task, current) if current is not None else None, tick)
        value = [merged.checked_through_ms, merged.last_occurrence_ms, merged.last_fired_at_ms]
        return await self._records.put(TICKS, tick.task, value, now_ms=now_ms, fence=lease)

    async def paused_tasks(self) -> Mapping[str, int]:
        """Paused task names and when each was paused."""
        return dict(await self._records.scan(PAUSED, now_ms=self._clock.now_ms()))

    async def pause_task(self, task: str, *, now_ms: int) -> None:
        """Stop dispatching ``task`` until it is resumed (pausing a paused task keeps its
        first instant)."""
        if await self._records.get(PAUSED, task, now_ms=now_ms) is None:
            await self._records.put(PAUSED, task, now_ms, now_ms=now_ms)

    async def resume_task(self, task: str) -> None:
        """Dispatch ``task`` again (a no-op when it is not paused)."""
        await self._records.delete(PAUSED, task)


def advanced(current: TaskTick | None, tick: TaskTick) -> TaskTick:
    """``tick`` merged onto ``current`` so that every field only moves forward."""
    if current is None:
        return tick
    return TaskTick(
        task=tick.task,
        checked_through_ms=max(current.checked_through_ms, tick.checked_through_ms),
        last_occurrence_ms=_latest(current.last_occurrence_ms, tick.last_occurrence_ms),
        last_fired_at_ms=_latest(current.last_fired_at_ms, tick.last_fired_at_ms),
    )


def _latest(a: int | None, b: int | None) -> int | None:
    present = [value for value in (a, b) if value is not None]
    return max(present) if present else None


def _tick_of(task: str, value: JsonValue) -> TaskTick:
    checked, occurrence, fired = value
    return TaskTick(task, checked, occurrence, fired)
