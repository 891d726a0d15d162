"""The scheduler's state as rows in the file: the leader lease, last ticks, paused tasks."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from ferry.drivers._sqlite.database import Database
from ferry.drivers.protocol import LeaderLease, TaskTick, advanced


class SqliteSchedulerStore:
    """``ferry_scheduler_leader``, ``ferry_scheduler_ticks``, ``ferry_scheduler_paused_tasks``."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def acquire_leadership(self, holder: str, *, now_ms: int, ttl_ms: int) -> bool:
        parameters = {"holder": holder, "now": now_ms, "expires_at_ms": now_ms + ttl_ms}
        return bool(await self._db.execute("scheduler_leader_acquire", parameters))

    async def release_leadership(self, holder: str) -> None:
        await self._db.execute("scheduler_leader_release", {"holder": holder})

    async def leader(self, *, now_ms: int) -> LeaderLease | None:
        rows = await self._db.fetch("scheduler_leader_get", {"now": now_ms})
        if not rows:
            return None
        [row] = rows
        return LeaderLease(row["holder"], row["acquired_at_ms"], row["expires_at_ms"])

    async def ticks(self) -> Mapping[str, TaskTick]:
        rows = await self._db.fetch("scheduler_ticks_list", {"task": None})
        return {row["task"]: _tick(row) for row in rows}

    async def record_tick(self, tick: TaskTick, *, holder: str, now_ms: int) -> bool:
        queries = self._db.queries

        def record(c: sqlite3.Connection) -> bool:
            lease = c.execute(queries["scheduler_leader_get"], {"now": now_ms}).fetchone()
            if lease is None or lease["holder"] != holder:
                return False  # fenced: a node that lost leadership moves nothing
            row = c.execute(queries["scheduler_ticks_list"], {"task": tick.task}).fetchone()
            merged = advanced(_tick(row) if row is not None else None, tick)
            c.execute(
                queries["scheduler_tick_record"],
                {
                    "task": merged.task,
                    "checked_through_ms": merged.checked_through_ms,
                    "last_occurrence_ms": merged.last_occurrence_ms,
                    "last_fired_at_ms": merged.last_fired_at_ms,
                },
            )
            return True

        return await self._db.transaction(record)

    async def paused_tasks(self) -> Mapping[str, int]:
        rows = await self._db.fetch("scheduler_paused_list")
        return {row["task"]: row["paused_at_ms"] for row in rows}

    async def pause_task(self, task: str, *, now_ms: int) -> None:
        await self._db.execute("scheduler_pause", {"task": task, "now": now_ms})

    async def resume_task(self, task: str) -> None:
        await self._db.execute("scheduler_resume", {"task": task})


def _tick(row: sqlite3.Row) -> TaskTick:
    return TaskTick(
        row["task"], row["checked_through_ms"], row["last_occurrence_ms"], row["last_fired_at_ms"]
    )
