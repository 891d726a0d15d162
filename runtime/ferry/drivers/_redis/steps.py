"""``StepStore`` on Redis: one hash of step documents per run, fenced on the lease holder."""

from __future__ import annotations

from collections.abc import Mapping

from ferry._clock import Clock
from ferry.drivers._redis.codec import step_document, steps_of
from ferry.drivers._redis.connection import Connection
from ferry.drivers._redis.keyspace import run_id
from ferry.drivers.protocol import StepRecord


class RedisStepStore:
    """``{prefix}:steps:<run id>``: step name -> its JSON document."""

    def __init__(self, connection: Connection, clock: Clock) -> None:
        self._connection = connection
        self._clock = clock

    async def load(self, job_id: str) -> Mapping[str, StepRecord]:
        known = run_id(job_id)
        if known is None:
            return {}
        stored = await self._connection.hgetall(self._connection.keys("steps", known))
        return {step.name: step for step in steps_of(stored)}

    async def record(self, job_id: str, step: StepRecord, *, worker_id: str) -> bool:
        known = run_id(job_id)
        if known is None:
            return False
        landed = await self._connection.run(
            "step_record",
            known,
            worker_id,
            self._clock.now_ms(),
            step.name,
            step_document(step),
            step.kind,
        )
        return bool(landed)
