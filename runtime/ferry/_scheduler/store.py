"""The scheduler's storage seam: the leader lease, last-tick rows and pause rows.

Every instant is a parameter, read by the caller off the driver's clock, so a frozen
clock drives the whole scheduler in tests. Postgres and memory implement it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class LeaderLease:
    """Who dispatches, since when, and until when unless renewed."""

    holder: str
    acquired_at_ms: int
    expires_at_ms: int


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


class SchedulerStore(Protocol):
    """Durable scheduler state: nothing of it lives in the scheduler process."""

    async def acquire_leadership(self, holder: str, *, now_ms: int, ttl_ms: int) -> bool:
        """Take the lease if it is free or expired, or renew it if ``holder`` has it."""
        ...

    async def release_leadership(self, holder: str) -> None:
        """Delete the lease if ``holder`` has it (a no-op otherwise)."""
        ...

    async def leader(self, *, now_ms: int) -> LeaderLease | None:
        """The unexpired lease, if any node holds one."""
        ...

    async def ticks(self) -> Mapping[str, TaskTick]:
        """Every task's last-tick state, by task name."""
        ...

    async def record_tick(self, tick: TaskTick, *, holder: str, now_ms: int) -> bool:
        """Move a task's state forward (never back) if ``holder`` still leads at ``now_ms``;
        answers whether it landed."""
        ...

    async def paused_tasks(self) -> Mapping[str, int]:
        """Paused task names and when each was paused."""
        ...

    async def pause_task(self, task: str, *, now_ms: int) -> None:
        """Stop dispatching ``task`` until it is resumed."""
        ...

    async def resume_task(self, task: str) -> None:
        """Dispatch ``task`` again (a no-op when it is not paused)."""
        ...

    async def close(self) -> None:
        """Hand back what the store owns."""
        ...


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
    """The later of two optional instants (SQL ``GREATEST`` ignores nulls the same way)."""
    present = [value for value in (a, b) if value is not None]
    return max(present) if present else None
