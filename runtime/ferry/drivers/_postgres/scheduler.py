"""The scheduler's state as rows in the driver's schema: leader lease, ticks, pauses."""

from __future__ import annotations

from collections.abc import Mapping

from ferry.drivers._postgres.database import Database
from ferry.drivers.protocol import LeaderLease, TaskTick


class PostgresSchedulerStore:
    """``scheduler_leader``, ``scheduler_ticks`` and ``scheduler_paused_tasks`` (migration 2)."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def acquire_leadership(self, holder: str, *, now_ms: int, ttl_ms: int) -> bool:
        pool = await self._db.pool()
        row = await pool.fetchrow(
            self._db.queries["scheduler_leader_acquire"], holder, now_ms, now_ms + ttl_ms
        )
        return row is not None

    async def release_leadership(self, holder: str) -> None:
        pool = await self._db.pool()
        await pool.execute(self._db.queries["scheduler_leader_release"], holder)

    async def leader(self, *, now_ms: int) -> LeaderLease | None:
        pool = await self._db.pool()
        row = await pool.fetchrow(self._db.queries["scheduler_leader_get"], now_ms)
        if row is None:
            return None
        return LeaderLease(row["holder"], row["acquired_at_ms"], row["expires_at_ms"])

    async def ticks(self) -> Mapping[str, TaskTick]:
        pool = await self._db.pool()
        rows = await pool.fetch(self._db.queries["scheduler_ticks_list"])
        return {
            row["task"]: TaskTick(
                row["task"],
                row["checked_through_ms"],
                row["last_occurrence_ms"],
                row["last_fired_at_ms"],
            )
            for row in rows
        }

    async def record_tick(self, tick: TaskTick, *, holder: str, now_ms: int) -> bool:
        pool = await self._db.pool()
        row = await pool.fetchrow(
            self._db.queries["scheduler_tick_record"],
            tick.task,
            tick.checked_through_ms,
            tick.last_occurrence_ms,
            tick.last_fired_at_ms,
            holder,
            now_ms,
        )
        return row is not None

    async def paused_tasks(self) -> Mapping[str, int]:
        pool = await self._db.pool()
        rows = await pool.fetch(self._db.queries["scheduler_paused_list"])
        return {row["task"]: row["paused_at_ms"] for row in rows}

    async def pause_task(self, task: str, *, now_ms: int) -> None:
        pool = await self._db.pool()
        await pool.execute(self._db.queries["scheduler_pause"], task, now_ms)

    async def resume_task(self, task: str) -> None:
        pool = await self._db.pool()
        await pool.execute(self._db.queries["scheduler_resume"], task)
