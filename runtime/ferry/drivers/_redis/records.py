"""``LeaseStore`` and ``RecordStore`` on Redis, each write one script.

A lease is the hash ``{prefix}:lease:<name>`` (holder, term, acquired, expires). A space
of records is the hash ``{prefix}:record:<space>`` (key -> ``"<expires>|<json>"``), with
``{prefix}:record-expiry`` ordering the expiring ones for prune. A log is the sorted set
``{prefix}:log:<space>:<key>`` of entry ids, each entry a hash ``{prefix}:log-entry:<id>``,
with ``{prefix}:log-age`` ordering them all by stamp for prune.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ferry.drivers._redis.codec import json_text, opt
from ferry.drivers._redis.connection import Connection
from ferry.drivers._redis.keyspace import run_id
from ferry.drivers.protocol import Fence, JsonValue, Lease, split_fence


class RedisLeaseStore:
    """Leases as hashes, taken and renewed by ``lua/lease_acquire.lua``."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def acquire(self, name: str, holder: str, *, now_ms: int, ttl_ms: int) -> Lease | None:
        held = await self._connection.run("lease_acquire", name, holder, now_ms, now_ms + ttl_ms)
        return None if held is None else Lease(name, held[0], *map(int, held[1:]))

    async def release(self, name: str, holder: str) -> None:
        await self._connection.run("lease_release", name, holder)

    async def read(self, name: str, *, now_ms: int) -> Lease | None:
        fields = ["holder", "term", "acquired", "expires"]
        lease = self._connection.keys("lease", name)
        holder, *numbers = await self._connection.command("HMGET", lease, *fields)
        if holder is None or None in numbers:
            return None
        term, acquired, expires = (int(n or 0) for n in numbers)
        return Lease(name, holder, term, acquired, expires) if expires > now_ms else None


class RedisRecordStore:
    """Records per space as hashes, logs as sorted sets of entries."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def get(self, space: str, key: str, *, now_ms: int) -> JsonValue | None:
        stored = await self._connection.command("HGET", self._connection.keys("record", space), key)
        return _live(stored, now_ms)

    async def scan(self, space: str, *, now_ms: int) -> Mapping[str, JsonValue]:
        stored = await self._connection.command("HGETALL", self._connection.keys("record", space))
        values = {key: _live(text, now_ms) for key, text in stored.items()}
        return {key: value for key, value in values.items() if value is not None}

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
        run_key = run_id(run.job_id) if run is not None else None
        if run is not None and run_key is None:
            return False  # an id no run can have holds nothing
        landed = await self._connection.run(
            "record_put",
            space,
            key,
            json_text(value),
            opt(expires_at_ms),
            now_ms,
            opt(lease.name if lease is not None else None),
            lease.holder if lease is not None else "",
            lease.term if lease is not None else "",
            opt(run_key),
            run.worker_id if run is not None else "",
        )
        return bool(landed)

    async def delete(self, space: str, key: str) -> None:
        await self._connection.command("HDEL", self._connection.keys("record", space), key)

    async def append(self, space: str, key: str, value: JsonValue, *, at_ms: int) -> None:
        await self._connection.run("log_append", space, key, json_text(value), at_ms)

    async def tail(self, space: str, key: str, *, limit: int) -> Sequence[JsonValue]:
        if limit <= 0:
            return []
        documents = await self._connection.run("log_tail", space, key, limit)
        return [json.loads(document) for document in documents if document is not None]


def _live(stored: str | None, now_ms: int) -> JsonValue | None:
    """A stored ``"<expires>|<json>"`` record's value, unless it expired by ``now_ms``."""
    if stored is None:
        return None
    expires, _, document = stored.partition("|")
    return None if expires and int(expires) <= now_ms else json.loads(document)
