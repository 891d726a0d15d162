"""``RunResults`` on Redis: runs' statuses, and news of runs ending over pub/sub.

The news is the ended channel, published by the scripts that end runs (a settle, an
operator's cancel) with the ids they ended. Only a process that waits for a result
subscribes to it: the driver's one pub/sub session follows it from the first ``news()``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ferry.drivers._columns import run_of
from ferry.drivers._redis.codec import columns_of
from ferry.drivers._redis.connection import Connection
from ferry.drivers._redis.keyspace import run_id
from ferry.drivers._wake import SettleWaiters
from ferry.drivers.protocol import RunStatus

_STATUS = (
    "name", "state", "attempts", "max_attempts", "pcur", "ptot", "result", "err_code",
    "err_msg", "finished", "parent",
)  # fmt: skip
"""The fields ``run_statuses`` answers per run, in order."""


class RedisResults:
    """Statuses read from the run hashes, news heard on the ended channel."""

    def __init__(self, connection: Connection, news: Callable[[], SettleWaiters]) -> None:
        self._connection = connection
        self._news = news

    async def statuses(self, job_ids: Sequence[str]) -> list[RunStatus | None]:
        known = [run_id(job_id) for job_id in job_ids]
        wanted = [job_id for job_id in known if job_id is not None]
        rows = await self._connection.run("run_statuses", *wanted) if wanted else []
        found = {
            job_id: _status(job_id, row) for job_id, row in zip(wanted, rows, strict=True) if row
        }
        return [found.get(job_id) if job_id is not None else None for job_id in known]

    def news(self) -> SettleWaiters:
        return self._news()


def _status(job_id: str, row: list[Any]) -> RunStatus:
    values = {name: value for name, value in zip(_STATUS, row, strict=True) if value}
    return run_of(RunStatus, columns_of(job_id, values))
