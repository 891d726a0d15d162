"""``ChildRuns``: what every driver does alike.

A parent's mark before it parks on a wait is one guarded statement (``children_await``);
what the mark does is ``ferry.drivers.fan_in``'s (Postgres: the triggers of migration
0023; SQLite: its settle; Redis: its scripts, through ``lib.lua``'s ``parent_counted``). A
fan-out is each driver's own (``enqueue_children``): Postgres writes it in one statement
that locks the parent, SQLite in one transaction under the write lock, Redis in one script.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from ferry.drivers._stores.statements import Statements, row_of
from ferry.drivers.protocol import EnqueueRequest, EnqueueResult, ParentRefusal, RunFence


class StatementChildren(ABC):
    """Children as runs naming their parent."""

    def __init__(self, statements: Statements) -> None:
        self._s = statements

    @abstractmethod
    async def enqueue_children(
        self, parent: RunFence, requests: Sequence[EnqueueRequest]
    ) -> list[EnqueueResult] | ParentRefusal:
        """Each driver's own (see the module's docstring)."""

    async def await_children(self, parent: RunFence) -> bool:
        pk = await row_of(self._s, parent.job_id)
        if pk is None:
            return False
        held = await self._s.write(
            "children_await", id=pk, worker_id=parent.worker_id, now=self._s.clock.now_ms()
        )
        return bool(held)
