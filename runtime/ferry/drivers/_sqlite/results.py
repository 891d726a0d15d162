"""``RunResults`` on SQLite: runs' statuses, and news of runs ending.

This process's own ends are told the moment their transaction commits (the driver's
settles and an operator's cancel); another process's commit is seen by the driver's
watcher, which cannot tell what it changed, so every waiter reads its runs again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from ferry.drivers._columns import run_of, run_pk
from ferry.drivers._sqlite.database import Database
from ferry.drivers._wake import SettleWaiters
from ferry.drivers.protocol import RunStatus


class SqliteResults:
    """Statuses read from ``ferry_jobs`` through the reader."""

    def __init__(self, database: Database, news: Callable[[], SettleWaiters]) -> None:
        self._db = database
        self._news = news

    async def statuses(self, job_ids: Sequence[str]) -> list[RunStatus | None]:
        pks = [run_pk(job_id) for job_id in job_ids]
        wanted = [pk for pk in pks if pk is not None]
        if not wanted:
            await self._db.open()
            return [None] * len(pks)
        rows = await self._db.fetch("run_statuses", {"ids": json.dumps(wanted)})
        found = {int(row["id"]): run_of(RunStatus, row) for row in rows}
        return [found.get(pk) if pk is not None else None for pk in pks]

    def news(self) -> SettleWaiters:
        return self._news()
