"""``LeaseStore`` and ``RecordStore`` over statements: the ``leases``, ``records`` and
``record_log`` tables (migration 9; Redis: the lease, record and log keys), one statement
per call.

A take of a lease and a fenced put are each one statement that checks and writes: the
row it decides on cannot change before its write lands (Postgres: the conflicting or
fencing row is locked; SQLite: the statement runs under the file's write lock; Redis: one
script).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ferry.drivers._columns import Row, from_json_text, json_text, run_pk
from ferry.drivers._stores.statements import Statements
from ferry.drivers.protocol import Fence, JsonValue, Lease, split_fence


class StatementLeaseStore:
    """The ``leases`` table: a row per lease name, its term kept when it lapses."""

    def __init__(self, statements: Statements) -> None:
        self._s = statements

    async def acquire(self, name: str, holder: str, *, now_ms: int, ttl_ms: int) -> Lease | None:
        return _lease(
            await self._s.write(
                "lease_acquire", name=name, holder=holder, now=now_ms, until=now_ms + ttl_ms
            )
        )

    async def release(self, name: str, holder: str) -> None:
        await self._s.write("lease_release", name=name, holder=holder)

    async def read(self, name: str, *, now_ms: int) -> Lease | None:
        return _lease(await self._s.read("lease_read", name=name, now=now_ms))


class StatementRecordStore:
    """The ``records`` and ``record_log`` tables."""

    def __init__(self, statements: Statements) -> None:
        self._s = statements

    async def get(self, space: str, key: str, *, now_ms: int) -> JsonValue | None:
        rows = await self._s.read("record_get", space=space, key=key, now=now_ms)
        return from_json_text(rows[0]["value"]) if rows else None

    async def scan(self, space: str, *, now_ms: int) -> Mapping[str, JsonValue]:
        rows = await self._s.read("record_scan", space=space, now=now_ms)
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
        lease, run = split_fence(fence)
        run_row = run_pk(run.job_id) if run is not None else None
        if run is not None and run_row is None:
            return False  # an id no run can have holds nothing
        parameters = put_parameters(space, key, value, now_ms=now_ms, expires_at_ms=expires_at_ms)
        if lease is not None:
            parameters.update(
                lease_name=lease.name, lease_holder=lease.holder, lease_term=lease.term
            )
        if run is not None:
            parameters.update(run_id=run_row, worker_id=run.worker_id)
        return bool(await self._s.write("record_put", **parameters))

    async def delete(self, space: str, key: str) -> None:
        await self._s.write("record_delete", space=space, key=key)

    async def append(self, space: str, key: str, value: JsonValue, *, at_ms: int) -> None:
        await self._s.write("log_append", space=space, key=key, value=json_text(value), at_ms=at_ms)

    async def tail(self, space: str, key: str, *, limit: int) -> Sequence[JsonValue]:
        rows = await self._s.read("log_tail", space=space, key=key, limit=max(limit, 0))
        return [from_json_text(row["value"]) for row in rows]


def put_parameters(
    space: str, key: str, value: JsonValue, *, now_ms: int, expires_at_ms: int | None
) -> dict[str, object]:
    """``record_put``'s parameters for a record, unfenced (a fence adds its own)."""
    unfenced = dict.fromkeys(("lease_name", "lease_holder", "lease_term", "run_id", "worker_id"))
    return {
        "space": space,
        "key": key,
        "value": json_text(value),
        "expires_at_ms": expires_at_ms,
        "now": now_ms,
        **unfenced,
    }


def _lease(rows: Sequence[Row]) -> Lease | None:
    return Lease(**{f: rows[0][f] for f in _LEASE_COLUMNS}) if rows else None


_LEASE_COLUMNS = ("name", "holder", "term", "acquired_at_ms", "expires_at_ms")
