"""``ChildRuns`` on Redis: a parent's fan-out in one script (``enqueue_children``), so the
fence on the parent, the children written and the parent's count (``ferry.drivers.fan_in``,
``lua/lib.lua``'s ``parent_counted``) are one atomic step. The mark before a wait is
``_stores.children``'s."""

from __future__ import annotations

from collections.abc import Sequence

from ferry.drivers._redis.codec import request_args
from ferry.drivers._redis.connection import Connection
from ferry.drivers._redis.keyspace import run_id
from ferry.drivers._stores.children import StatementChildren
from ferry.drivers._stores.statements import Statements
from ferry.drivers.protocol import EnqueueRequest, EnqueueResult, ParentRefusal, RunFence


class RedisChildren(StatementChildren):
    """Children as runs naming their ``parent``, indexed under ``children:<parent>``."""

    def __init__(self, statements: Statements, connection: Connection) -> None:
        super().__init__(statements)
        self._connection = connection

    async def enqueue_children(
        self, parent: RunFence, requests: Sequence[EnqueueRequest]
    ) -> list[EnqueueResult] | ParentRefusal:
        known = run_id(parent.job_id)
        if known is None:
            return "not-held"
        args: list[str | int] = [known, parent.worker_id, self._s.clock.now_ms(), len(requests)]
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
