"""The scheduler's state in one process: the lease, last ticks and pauses."""

from __future__ import annotations

from collections.abc import Mapping

from ferry.drivers.protocol import LeaderLease, TaskTick, advanced


class MemorySchedulerStore:
    """The ``SchedulerStore`` of the memory driver; gone when the process exits."""

    def __init__(self) -> None:
        self._lease: LeaderLease | None = None
        self._ticks: dict[str, TaskTick] = {}
        self._paused: dict[str, int] = {}

    async def acquire_leadership(self, holder: str, *, now_ms: int, ttl_ms: int) -> bool:
        lease = self._lease
        if lease is not None and lease.holder != holder and lease.expires_at_ms > now_ms:
            return False
        renewing = lease is not None and lease.holder == holder
        acquired_at = lease.acquired_at_ms if lease is not None and renewing else now_ms
        self._lease = LeaderLease(holder, acquired_at, now_ms + ttl_ms)
        return True

    async def release_leadership(self, holder: str) -> None:
        if self._lease is not None and self._lease.holder == holder:
            self._lease = None

    async def leader(self, *, now_ms: int) -> LeaderLease | None:
        lease = self._lease
        return lease if lease is not None and lease.expires_at_ms > now_ms else None

    async def ticks(self) -> Mapping[str, TaskTick]:
        return dict(self._ticks)

    async def record_tick(self, tick: TaskTick, *, holder: str, now_ms: int) -> bool:
        lease = await self.leader(now_ms=now_ms)
        if lease is None or lease.holder != holder:
            return False
        self._ticks[tick.task] = advanced(self._ticks.get(tick.task), tick)
        return True

    async def paused_tasks(self) -> Mapping[str, int]:
        return dict(self._paused)

    async def pause_task(self, task: str, *, now_ms: int) -> None:
        self._paused.setdefault(task, now_ms)

    async def resume_task(self, task: str) -> None:
        self._paused.pop(task, None)
