"""Leases and records in one process: dictionaries, each call atomic (no ``await`` inside)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ferry.drivers.protocol import Fence, JsonValue, Lease, RunFence


class MemoryLeaseStore:
    """The ``LeaseStore`` of the memory driver."""

    def __init__(self) -> None:
        self._leases: dict[str, Lease] = {}

    async def acquire(self, name: str, holder: str, *, now_ms: int, ttl_ms: int) -> Lease | None:
        held = self._leases.get(name)
        if held is not None and held.expires_at_ms > now_ms:
            if held.holder != holder:
                return None
            renewed = replace(held, expires_at_ms=now_ms + ttl_ms)
        else:
            term = held.term + 1 if held is not None else 1
            renewed = Lease(name, holder, term, now_ms, now_ms + ttl_ms)
        self._leases[name] = renewed
        return renewed

    async def release(self, name: str, holder: str) -> None:
        held = self._leases.get(name)
        if held is not None and held.holder == holder:
            self._leases[name] = replace(held, expires_at_ms=0)

    async def read(self, name: str, *, now_ms: int) -> Lease | None:
        held = self._leases.get(name)
        return held if held is not None and held.expires_at_ms > now_ms else None

    def holds(self, fence: Lease, now_ms: int) -> bool:
        """Whether ``fence``'s holder still holds its lease in its term at ``now_ms``."""
        held = self._leases.get(fence.name)
        return (
            held is not None
            and (held.holder, held.term) == (fence.holder, fence.term)
            and held.expires_at_ms > now_ms
        )


class MemoryRecordStore:
    """The ``RecordStore`` of the memory driver; ``holds_run`` is the driver's lease fence."""

    def __init__(self, leases: MemoryLeaseStore, holds_run: Callable[[str, str], bool]) -> None:
        self._leases = leases
        self._holds_run = holds_run
        self._records: dict[tuple[str, str], tuple[JsonValue, int | None]] = {}
        self._logs: dict[tuple[str, str], list[tuple[int, JsonValue]]] = {}

    async def get(self, space: str, key: str, *, now_ms: int) -> JsonValue | None:
        value, expires = self._records.get((space, key), (None, None))
        return value if expires is None or expires > now_ms else None

    async def scan(self, space: str, *, now_ms: int) -> Mapping[str, JsonValue]:
        return {
            key: value
            for (s, key), (value, expires) in self._records.items()
            if s == space and (expires is None or expires > now_ms)
        }

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
        if isinstance(fence, RunFence) and not self._holds_run(fence.job_id, fence.worker_id):
            return False
        if isinstance(fence, Lease) and not self._leases.holds(fence, now_ms):
            return False
        self._records[(space, key)] = (value, expires_at_ms)
        return True

    async def delete(self, space: str, key: str) -> None:
        self._records.pop((space, key), None)

    async def append(self, space: str, key: str, value: JsonValue, *, at_ms: int) -> None:
        self._logs.setdefault((space, key), []).append((at_ms, value))

    async def tail(self, space: str, key: str, *, limit: int) -> Sequence[JsonValue]:
        return [value for _, value in reversed(self._logs.get((space, key), []))][:limit]

    def prune(self, *, now_ms: int, logs_before_ms: int | None) -> tuple[int, int]:
        """Forget expired records and (``logs_before_ms``) older log entries; answers how
        many log entries and records went."""
        live = {
            at: (value, expires)
            for at, (value, expires) in self._records.items()
            if expires is None or expires > now_ms
        }
        expired = len(self._records) - len(live)
        self._records = live
        if logs_before_ms is None:
            return 0, expired
        pruned = 0
        for at, entries in list(self._logs.items()):
            kept = [(stamp, value) for stamp, value in entries if stamp >= logs_before_ms]
            pruned += len(entries) - len(kept)
            self._logs[at] = kept
            if not kept:
                del self._logs[at]
        return pruned, expired
