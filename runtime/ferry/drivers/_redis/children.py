"""``ChildRuns`` on Redis: a parent's fan-out, and its mark before it parks on a wait.

Each is one script, so the fence on the parent, the children written and the parent's
count (``ferry.drivers.fan_in``, ``lua/lib.lua``'s ``parent_counted``) are one atomic step.
"""

from __future__ import annotations

from collections.abc import Sequence

from ferry._clock import Clock
from ferry.drivers._redis.codec import request_args
from ferry.drivers._redis.connection import Connection
from ferry.drivers._redis.keyspace import run_id
from ferry.drivers.protocol import EnqueueRequest, EnqueueResult, ParentRefusal, RunFence


class RedisChildren:
    """Children as runs naming their ``parent``, indexed under ``children:<parent>``."""

    def __init__(self, connection: Connection, clock: Clock) -> None:
        self._connection = connection
        self._clock = clock

    async def enqueue_children(
        self, parent: RunFence, requests: Sequence[EnqueueRequest]
    ) -> list[EnqueueResult] | ParentRefusal:
        known = run_id(parent.job_id)
        if known is None:
            return "not-held"
        args: list[str | int] = [known, parent.worker_id, self._clock.now_ms(), len(requests)]
        for r in requests:
            args += request_args(r)
        answers = await self._connection.run("enqueue_children", *args)
        if answers == "not-held" or answers == "cancel-requested":
            refusal: ParentRefusal = answers
            return refusal
        return [
            EnqueueResult(str(job_id), bool(deduplicated))
            for job_id, deduplicated in zip(answers[::2], answers[1::2], strict=True)
        ]

    async def await_children(self, parent: RunFence) -> bool:
        known = run_id(parent.job_id)
        if known is None:
            return False
        held = await self._connection.run(
            "children_await", known, parent.worker_id, self._clock.now_ms()
        )
        return bool(held)
