"""``ChildRuns`` on Postgres: a parent's fan-out in one statement (``enqueue_children``)
that locks the parent, fences it and counts the children it wrote; the rest of
``ferry.drivers.fan_in`` (counting ends, waking a parent) is the triggers of migration
0023, and the mark before a wait is ``_stores.children``'s."""

from __future__ import annotations

from collections.abc import Sequence

from ferry.drivers._columns import json_text, run_pk, stored_columns
from ferry.drivers._postgres.database import Database
from ferry.drivers._stores.children import StatementChildren
from ferry.drivers._stores.enqueue import EnqueueBatch
from ferry.drivers.protocol import EnqueueRequest, EnqueueResult, ParentRefusal, RunFence


class PostgresChildren(StatementChildren):
    """Children as rows of ``jobs`` naming their ``parent_id``."""

    def __init__(self, database: Database) -> None:
        super().__init__(database)
        self._db = database

    async def enqueue_children(
        self, parent: RunFence, requests: Sequence[EnqueueRequest]
    ) -> list[EnqueueResult] | ParentRefusal:
        pk = run_pk(parent.job_id)
        if pk is None:
            return "not-held"
        pool = await self._db.pool()
        queries = self._db.queries
        batch = EnqueueBatch(requests)
        while pending := batch.pending():
            rows = await pool.fetch(
                queries["enqueue_children"],
                self._db.clock.now_ms(),
                pk,
                parent.worker_id,
                json_text([stored_columns(r) for r in pending]),
            )
            [fence] = [row for row in rows if row["id"] is None]
            if not fence["held"]:
                return "not-held"
            if fence["cancel_requested"]:
                return "cancel-requested"
            if taken := batch.written(row for row in rows if row["id"] is not None):
                batch.existing(await pool.fetch(queries["enqueue_existing"], taken))
        return batch.results()
