"""``ChildRuns`` on a SQL driver: what both dialects do alike.

A parent's mark before it parks on a wait is one guarded statement (``children_await``);
what the mark does is ``ferry.drivers.fan_in``'s (Postgres: the triggers of migration
0023; SQLite: its settle). A fan-out is each dialect's own (``enqueue_children``):
Postgres writes it in one statement that locks the parent, SQLite in one transaction
under the write lock.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from ferry.drivers._stores.statements import Statements, row_of
from ferry.drivers.protocol import EnqueueRequest, EnqueueResult, ParentRefusal, RunFence


class SqlChildren(ABC):
    """Children as rows of ``jobs`` naming their ``parent_id``."""

    def __init__(self, statements: Statements) -> None:
        self._s = statements

    @abstractmethod
    async def enqueue_children(
        self, parent: RunFence, requests: Sequence[EnqueueRequest]
    ) -> list[EnqueueResult] | ParentRefusal:
        """Each dialect's own (see the module's docstring)."""

    async def await_children(self, parent: RunFence) -> bool:
        pk = await row_of(self._s, parent.job_id)
        if pk is None:
            return False
        held = await self._s.write(
            "children_await", id=pk, worker_id=parent.worker_id, now=self._s.clock.now_ms()
        )
        return bool(held)
