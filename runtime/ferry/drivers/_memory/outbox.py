"""The outbox in one process. There is no transaction to join: an append is at once."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ferry._clock import Clock
from ferry.drivers._memory.wake import MemoryWake
from ferry.drivers._outbox import SyncAppend, checked_entry
from ferry.drivers._refusals import no_transaction_to_join
from ferry.drivers.protocol import JsonValue, OutboxEntry


@dataclass
class _Entry:
    id: int
    type: str
    payload: JsonValue
    created_at_ms: int
    attempts: int = 0
    claimed_by: str | None = None
    lease_expires_at_ms: int | None = None
    last_error: str | None = None
    published_at_ms: int | None = None


class MemoryOutbox(SyncAppend):
    """The ``OutboxStore`` of the memory driver: for tests and experiments, never durable."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._entries: dict[int, _Entry] = {}
        self._ids = itertools.count(1)
        self._wake = MemoryWake(clock)

    async def append(self, type: str, payload: Any, *, connection: Any) -> str:
        document = checked_entry(type, payload)
        if connection is not None:
            raise no_transaction_to_join(
                f'outbox append of "{type}"',
                "memory",
                "use the postgres or sqlite driver's outbox for transactional appends; with "
                "the memory driver pass connection=None (the entry is written at once)",
            )
        entry = _Entry(next(self._ids), type, document, self._clock.now_ms())
        self._entries[entry.id] = entry
        self._wake.notify()
        return str(entry.id)

    def wake(self) -> MemoryWake:
        return self._wake

    async def claim(self, *, relay_id: str, lease_ms: int, limit: int) -> list[OutboxEntry]:
        now = self._clock.now_ms()
        claimable = [
            e
            for e in sorted(self._entries.values(), key=lambda e: e.id)
            if e.published_at_ms is None
            and (e.lease_expires_at_ms is None or e.lease_expires_at_ms <= now)
        ]
        claimed = []
        for entry in claimable[: max(limit, 0)]:
            entry.attempts += 1
            entry.claimed_by = relay_id
            entry.lease_expires_at_ms = now + lease_ms
            claimed.append(
                OutboxEntry(
                    str(entry.id), entry.type, entry.payload, entry.attempts, entry.created_at_ms
                )
            )
        return claimed

    async def mark_published(self, ids: Sequence[str], *, relay_id: str) -> list[str]:
        now = self._clock.now_ms()
        marked = []
        for entry_id in ids:
            entry = self._held(entry_id, relay_id)
            if entry is not None:
                entry.published_at_ms = now
                entry.claimed_by = entry.lease_expires_at_ms = entry.last_error = None
                marked.append(entry_id)
        return marked

    async def publish_failed(self, entry_id: str, *, relay_id: str, error: str) -> None:
        entry = self._held(entry_id, relay_id)
        if entry is not None:
            entry.last_error = error

    async def pending(self) -> int:
        return sum(1 for e in self._entries.values() if e.published_at_ms is None)

    def prune(self, published_before_ms: int) -> int:
        """Forget entries published before the instant; answers how many went."""
        gone = [
            i
            for i, e in self._entries.items()
            if e.published_at_ms is not None and e.published_at_ms < published_before_ms
        ]
        for entry_id in gone:
            del self._entries[entry_id]
        return len(gone)

    def _held(self, entry_id: str, relay_id: str) -> _Entry | None:
        entry = self._entries.get(int(entry_id)) if entry_id.isdigit() else None
        if entry is None or entry.published_at_ms is not None or entry.claimed_by != relay_id:
            return None  # fenced on the claimer, as the Postgres outbox is
        return entry
