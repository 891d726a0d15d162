"""``RunResults`` on every driver: runs' statuses, and news of runs ending.

The statuses are one statement (``run_statuses``). The news is the driver's: Postgres
hears the ended channel its statements notify (the worker's round trip,
``_settle_news.sql``; an operator's cancel, ``runs_ended``), on its one LISTEN session
from the first ``news()``; Redis hears the ended channel its scripts publish to (a settle,
an operator's cancel), on its one pub/sub session from the first ``news()``; SQLite tells
this process's ends the moment their transaction commits, and its watcher sees another
process's commit (which cannot tell what it changed, so every waiter reads its runs again).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ferry.drivers._columns import run_of, run_pk
from ferry.drivers._stores.statements import Statements
from ferry.drivers._wake import SettleWaiters
from ferry.drivers.protocol import RunStatus


class StatementResults:
    """Statuses read from the runs (``jobs``, or Redis' run hashes); ``news`` is the
    driver's waiters."""

    def __init__(self, statements: Statements, news: Callable[[], SettleWaiters]) -> None:
        self._s = statements
        self._news = news

    async def statuses(self, job_ids: Sequence[str]) -> list[RunStatus | None]:
        pks = [run_pk(job_id) for job_id in job_ids]
        wanted = [pk for pk in pks if pk is not None]
        if not wanted:
            await self._s.open()
            return [None] * len(pks)
        rows = await self._s.read("run_statuses", ids=wanted)
        found = {int(row["id"]): run_of(RunStatus, row) for row in rows}
        return [found.get(pk) if pk is not None else None for pk in pks]

    def news(self) -> SettleWaiters:
        return self._news()
