"""The outbox table in the driver's schema.

``append`` writes through the caller's connection, inside the caller's transaction, so the
entry exists exactly when the business write does (``joined`` says which connections). The
relay reads the same table through the driver's own pool. The outbox database need not be
the queue's: a relay reads the outbox of one driver and publishes to whatever job driver is
configured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ferry.drivers._columns import from_json_text, json_text
from ferry.drivers._outbox import SyncAppend, appended_under, checked_entry
from ferry.drivers._postgres.database import Database
from ferry.drivers._postgres.joined import joined_session
from ferry.drivers._postgres.wake import ChannelWake
from ferry.drivers.protocol import OutboxEntry


class PostgresOutbox(SyncAppend):
    """``outbox`` (migration 3); woken on the schema's outbox channel."""

    def __init__(self, database: Database, wake: Callable[[], ChannelWake]) -> None:
        self._db = database
        self._wake = wake

    async def append(self, type: str, payload: Any, *, connection: Any) -> str:
        document = checked_entry(type, payload)
        session = await joined_session(
            connection, self._db, what=f'outbox append of "{type}"', transaction=True
        )
        [row] = await session.fetch(
            self._db.queries["outbox_append"],
            type,
            json_text(document),
            self._db.clock.now_ms(),
            appended_under(),
        )
        entry_id: str = row["id"]
        return entry_id

    def wake(self) -> ChannelWake:
        """The driver's LISTEN session, on the outbox channel."""
        return self._wake()

    async def claim(self, *, relay_id: str, lease_ms: int, limit: int) -> list[OutboxEntry]:
        pool = await self._db.pool()
        now = self._db.clock.now_ms()
        rows = await pool.fetch(
            self._db.queries["outbox_claim"], relay_id, now, now + lease_ms, max(limit, 0)
        )
        entries = [
            OutboxEntry(
                id=str(row["id"]),
                type=row["type"],
                payload=from_json_text(row["payload"]),
                attempts=row["attempts"],
                created_at_ms=row["created_at_ms"],
                traceparent=row["traceparent"],
            )
            for row in rows
        ]
        return sorted(entries, key=lambda e: int(e.id))

    async def mark_published(self, ids: Sequence[str], *, relay_id: str) -> list[str]:
        if not ids:
            return []
        pool = await self._db.pool()
        rows = await pool.fetch(
            self._db.queries["outbox_mark_published"],
            [int(i) for i in ids],
            relay_id,
            self._db.clock.now_ms(),
        )
        return [str(row["id"]) for row in rows]

    async def publish_failed(self, entry_id: str, *, relay_id: str, error: str) -> None:
        pool = await self._db.pool()
        await pool.execute(
            self._db.queries["outbox_publish_failed"], int(entry_id), relay_id, error
        )

    async def pending(self) -> int:
        pool = await self._db.pool()
        count: int = await pool.fetchval(self._db.queries["outbox_pending"])
        return count
