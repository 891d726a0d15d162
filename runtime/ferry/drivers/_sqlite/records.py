"""``LeaseStore`` and ``RecordStore`` on SQLite: the ``ferry_leases``, ``ferry_records`` and
``ferry_record_log`` tables (migration 9).

A take of a lease and a fenced put each read and write inside one ``BEGIN IMMEDIATE``
transaction: the file's write lock admits one at a time, fleet-wide on the host, so the
decision made in Python holds until its write commits.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace

from ferry.drivers._columns import from_json_text, json_text
from ferry.drivers._sqlite.database import Database
from ferry.drivers._sqlite.runs import held
from ferry.drivers.protocol import Fence, JsonValue, Lease, RunFence


class SqliteLeaseStore:
    """The ``ferry_leases`` table: a row per lease name."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def acquire(self, name: str, holder: str, *, now_ms: int, ttl_ms: int) -> Lease | None:
        queries = self._db.queries

        def acquire(c: sqlite3.Connection) -> Lease | None:
            stored = _lease(c.execute(queries["lease_get"], {"name": name}).fetchone())
            if stored is not None and stored.expires_at_ms > now_ms:
                if stored.holder != holder:
                    return None
                lease = replace(stored, expires_at_ms=now_ms + ttl_ms)
            else:
                term = stored.term + 1 if stored is not None else 1
                lease = Lease(name, holder, term, now_ms, now_ms + ttl_ms)
            c.execute(queries["lease_put"], asdict(lease))
            return lease

        return await self._db.transaction(acquire)

    async def release(self, name: str, holder: str) -> None:
        await self._db.execute("lease_release", {"name": name, "holder": holder})

    async def read(self, name: str, *, now_ms: int) -> Lease | None:
        rows = await self._db.fetch("lease_get", {"name": name})
        lease = _lease(rows[0]) if rows else None
        return lease if lease is not None and lease.expires_at_ms > now_ms else None


class SqliteRecordStore:
    """The ``ferry_records`` and ``ferry_record_log`` tables."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def get(self, space: str, key: str, *, now_ms: int) -> JsonValue | None:
        rows = await self._db.fetch("record_get", {"space": space, "key": key, "now": now_ms})
        return from_json_text(rows[0]["value"]) if rows else None

    async def scan(self, space: str, *, now_ms: int) -> Mapping[str, JsonValue]:
        rows = await self._db.fetch("record_scan", {"space": space, "now": now_ms})
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
        queries = self._db.queries
        parameters = {
            "space": space,
            "key": key,
            "value": json_text(value),
            "expires_at_ms": expires_at_ms,
            "now": now_ms,
        }

        def put(c: sqlite3.Connection) -> bool:
            if isinstance(fence, RunFence):
                if held(c, queries, fence.job_id, fence.worker_id, now_ms) is None:
                    return False
            elif isinstance(fence, Lease):
                lease = _lease(c.execute(queries["lease_get"], {"name": fence.name}).fetchone())
                if lease is None or (lease.holder, lease.term) != (fence.holder, fence.term):
                    return False
                if lease.expires_at_ms <= now_ms:
                    return False
            c.execute(queries["record_put"], parameters)
            return True

        return await self._db.transaction(put)

    async def delete(self, space: str, key: str) -> None:
        await self._db.execute("record_delete", {"space": space, "key": key})

    async def append(self, space: str, key: str, value: JsonValue, *, at_ms: int) -> None:
        parameters = {"space": space, "key": key, "value": json_text(value), "at_ms": at_ms}
        await self._db.execute("log_append", parameters)

    async def tail(self, space: str, key: str, *, limit: int) -> Sequence[JsonValue]:
        parameters = {"space": space, "key": key, "limit": max(limit, 0)}
        return [
            from_json_text(row["value"]) for row in await self._db.fetch("log_tail", parameters)
        ]


def _lease(row: sqlite3.Row | None) -> Lease | None:
    return Lease(**dict(row)) if row is not None else None
