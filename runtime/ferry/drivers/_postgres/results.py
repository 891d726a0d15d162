"""``RunResults`` on Postgres: runs' statuses, and news of runs ending over LISTEN.

The news is the ended channel, notified by the statements that end runs (the worker's
round trip, ``_settle_news.sql``; an operator's cancel) with the ids they ended. Only a
process that waits for a result listens to it: the driver's one LISTEN session follows it
from the first ``news()``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ferry.drivers._columns import run_of, run_pk
from ferry.drivers._postgres.database import Database
from ferry.drivers._wake import SettleWaiters
from ferry.drivers.protocol import RunStatus


class PostgresResults:
    """Statuses read from the ``jobs`` table, news heard on the ended channel."""

    def __init__(self, database: Database, news: Callable[[], SettleWaiters]) -> None:
        self._db = database
        self._news = news

    async def statuses(self, job_ids: Sequence[str]) -> list[RunStatus | None]:
        pks = [run_pk(job_id) for job_id in job_ids]
        pool = await self._db.pool()
        wanted = [pk for pk in pks if pk is not None]
        rows = await pool.fetch(self._db.queries["run_statuses"], wanted) if wanted else []
        found = {int(row["id"]): run_of(RunStatus, row) for row in rows}
        return [found.get(pk) if pk is not None else None for pk in pks]

    def news(self) -> SettleWaiters:
        return self._news()
