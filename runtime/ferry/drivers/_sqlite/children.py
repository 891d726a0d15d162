"""``ChildRuns`` on SQLite: a parent's fan-out in one transaction under the file's write
lock, so the fence on the parent, the children written and the parent's count
(``ferry.drivers.fan_in``) cannot race anything. The mark before a wait is
``_stores.children``'s."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ferry.drivers._columns import run_pk
from ferry.drivers._sqlite import runs
from ferry.drivers._sqlite.database import Database, played
from ferry.drivers._stores.children import StatementChildren
from ferry.drivers._stores.enqueue import EnqueueBatch
from ferry.drivers._stores.moves import Moved
from ferry.drivers.protocol import EnqueueRequest, EnqueueResult, ParentRefusal, RunFence


class SqliteChildren(StatementChildren):
    """Children as rows of ``ferry_jobs`` naming their ``parent_id``; ``moves`` tells this
    process's workers of the children due now."""

    def __init__(self, database: Database, moves: runs.CountedMoves) -> None:
        super().__init__(database)
        self._db = database
        self._moves = moves

    async def enqueue_children(
        self, parent: RunFence, requests: Sequence[EnqueueRequest]
    ) -> list[EnqueueResult] | ParentRefusal:
        pk = run_pk(parent.job_id)
        batch = EnqueueBatch(requests)
        queries = self._db.queries
        moved = Moved()

        def write(c: sqlite3.Connection) -> list[EnqueueResult] | ParentRefusal:
            now = self._db.clock.now_ms()
            row = runs.held(c, queries, parent.job_id, parent.worker_id, now)
            if row is None or pk is None:
                return "not-held"
            if row["cancel_requested_at_ms"] is not None:
                return "cancel-requested"
            results = runs.enqueue(c, queries, batch, now, parent_id=pk)
            if batch.runs_written:
                played(c, queries, runs.parent_counted(pk, batch.runs_written, now, moved))
            return results

        answer = await self._db.transaction(write)
        moved.woke = batch.woke
        self._moves.committed(moved)
        return answer
