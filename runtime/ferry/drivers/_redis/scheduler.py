"""The scheduler's state under the prefix: the leader lease, last ticks and pauses.

``{prefix}:leader`` is a hash (holder, acquired, expires, term): taken, renewed and
released by scripts that compare and set in one step, with a term that grows with every
change of holder. Ticks are fenced on it in the same script that writes them.
"""

from __future__ import annotations

from collections.abc import Mapping

from ferry.drivers._redis.codec import opt, optional_int
from ferry.drivers._redis.connection import Connection
from ferry.drivers.protocol import LeaderLease, TaskTick


class RedisSchedulerStore:
    """``{prefix}:leader``, ``{prefix}:ticks`` and ``{prefix}:paused-tasks``."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def acquire_leadership(self, holder: str, *, now_ms: int, ttl_ms: int) -> bool:
        held = await self._connection.run("leader_acquire", holder, now_ms, now_ms + ttl_ms)
        return bool(held)

    async def release_leadership(self, holder: str) -> None:
        await self._connection.run("leader_release", holder)

    async def leader(self, *, now_ms: int) -> LeaderLease | None:
        holder, acquired, expires = await self._connection.hmget(
            self._connection.keys("leader"), ["holder", "acquired", "expires"]
        )
        if holder is None or acquired is None or expires is None or int(expires) <= now_ms:
            return None
        return LeaderLease(holder, int(acquired), int(expires))

    async def term(self) -> int:
        """How many times the lease has changed holder: a fencing token that only grows."""
        return int(await self._connection.hget(self._connection.keys("leader"), "term") or 0)

    async def ticks(self) -> Mapping[str, TaskTick]:
        stored = await self._connection.hgetall(self._connection.keys("ticks"))
        ticks = {}
        for task, value in stored.items():
            checked, occurrence, fired = value.split("|")
            ticks[task] = TaskTick(
                task, int(checked), optional_int(occurrence or None), optional_int(fired or None)
            )
        return ticks

    async def record_tick(self, tick: TaskTick, *, holder: str, now_ms: int) -> bool:
        landed = await self._connection.run(
            "tick_record",
            tick.task,
            tick.checked_through_ms,
            opt(tick.last_occurrence_ms),
            opt(tick.last_fired_at_ms),
            holder,
            now_ms,
        )
        return bool(landed)

    async def paused_tasks(self) -> Mapping[str, int]:
        stored = await self._connection.hgetall(self._connection.keys("paused-tasks"))
        return {task: int(at) for task, at in stored.items()}

    async def pause_task(self, task: str, *, now_ms: int) -> None:
        client = await self._connection.client()
        await client.hsetnx(self._connection.keys("paused-tasks"), task, now_ms)

    async def resume_task(self, task: str) -> None:
        client = await self._connection.client()
        await client.hdel(self._connection.keys("paused-tasks"), task)
