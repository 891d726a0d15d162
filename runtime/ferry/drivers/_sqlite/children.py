"""``ChildRuns`` on SQLite: a parent's fan-out, and its mark before it parks on a wait.

Each is one transaction under the file's write lock, so the fence on the parent, the
children written and the parent's count (``ferry.drivers.fan_in``) cannot race anything.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from ferry.drivers._columns import run_pk
from ferry.drivers._sqlite import runs
from ferry.drivers._sqlite.database import Database
from ferry.drivers.protocol import EnqueueRequest, EnqueueResult, ParentRefusal, RunFence


class SqliteChildren:
    """Children as rows of ``ferry_jobs`` naming their ``parent_id``; ``moved`` tells this
    process's workers of the children due now."""

    def __init__(self, database: Database, moved: Callable[[runs.Moved], None]) -> None:
        self._db = database
        self._moved = moved

    async def enqueue_children(
        self, parent: RunFence, requests: Sequence[EnqueueRequest]
    ) -> list[EnqueueResult] | ParentRefusal:
        pk = run_pk(parent.job_id)
        batch = runs.EnqueueBatch(requests, parent_id=pk)
        queries = self._db.queries
        moved = runs.Moved()

        def write(c: sqlite3.Connection) -> list[EnqueueResult] | ParentRefusal:
            now = self._db.clock.now_ms()
            row = runs.held(c, queries, parent.job_id, parent.worker_id, now)
            if row is None or pk is None:
                return "not-held"
            if row["cancel_requested_at_ms"] is not None:
                return "cancel-requested"
            results = runs.enqueue(c, queries, batch, now)
            if batch.written:
                moved.count(c, queries, pk, batch.written, now)
            return results

        answer = await self._db.transaction(write)
        moved.woke = batch.woke
        self._moved(moved)
        return answer

    async def await_children(self, parent: RunFence) -> bool:
        return await runs.write_if_held(
            self._db,
            parent.job_id,
            parent.worker_id,
            "children_await",
            {"id": run_pk(parent.job_id)},
        )
