"""``LeaseStore`` and ``RecordStore`` on Postgres: the ``leases``, ``records`` and
``record_log`` tables (migration 9), one statement per call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import asyncpg

from ferry.drivers._columns import from_json_text, json_text, run_pk
from ferry.drivers._postgres.database import Database
from ferry.drivers.protocol import Fence, JsonValue, Lease, RunFence


class PostgresLeaseStore:
    """The ``leases`` table: a row per lease name."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def acquire(self, name: str, holder: str, *, now_ms: int, ttl_ms: int) -> Lease | None:
        pool = await self._db.pool()
        return _lease(
            await pool.fetchrow(self._db.queries["lease_acquire"], name, holder, now_ms, ttl_ms)
        )

    async def release(self, name: str, holder: str) -> None:
        pool = await self._db.pool()
        await pool.execute(self._db.queries["lease_release"], name, holder)

    async def read(self, name: str, *, now_ms: int) -> Lease | None:
        pool = await self._db.pool()
        return _lease(await pool.fetchrow(self._db.queries["lease_read"], name, now_ms))


class PostgresRecordStore:
    """The ``records`` and ``record_log`` tables."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def get(self, space: str, key: str, *, now_ms: int) -> JsonValue | None:
        pool = await self._db.pool()
        return from_json_text(
            await pool.fetchval(self._db.queries["record_get"], space, key, now_ms)
        )

    async def scan(self, space: str, *, now_ms: int) -> Mapping[str, JsonValue]:
        pool = await self._db.pool()
        rows = await pool.fetch(self._db.queries["record_scan"], space, now_ms)
        return {row["key"]: from_json_text(row["value"]) for row in rows}

    async def put(
        self,
        space: str,
        key: str,
        value: JsonValue,
        *,
        now_ms: int,
        expires_at_ms: int | None = None,
        fence: Fence | None = None,
    ) -> bool:
        lease = fence if isinstance(fence, Lease) else None
        run = fence if isinstance(fence, RunFence) else None
        run_row = run_pk(run.job_id) if run is not None else None
        if run is not None and run_row is None:
            return False  # an id no run can have holds nothing
        pool = await self._db.pool()
        landed: bool = await pool.fetchval(
            self._db.queries["record_put"],
            space,
            key,
            json_text(value),
            expires_at_ms,
            now_ms,
            lease.name if lease is not None else None,
            lease.holder if lease is not None else None,
            lease.term if lease is not None else None,
            run_row,
            run.worker_id if run is not None else None,
        )
        return landed

    async def delete(self, space: str, key: str) -> None:
        pool = await self._db.pool()
        await pool.execute(self._db.queries["record_delete"], space, key)

    async def append(self, space: str, key: str, value: JsonValue, *, at_ms: int) -> None:
        pool = await self._db.pool()
        await pool.execute(self._db.queries["log_append"], space, key, json_text(value), at_ms)

    async def tail(self, space: str, key: str, *, limit: int) -> Sequence[JsonValue]:
        pool = await self._db.pool()
        rows = await pool.fetch(self._db.queries["log_tail"], space, key, max(limit, 0))
        return [from_json_text(row["value"]) for row in rows]


def _lease(row: asyncpg.Record | None) -> Lease | None:
    return Lease(**dict(row)) if row is not None else None
