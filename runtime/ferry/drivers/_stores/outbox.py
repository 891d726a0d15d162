"""The outbox's relay side on every driver: claim, mark, note a failure, count.

How an entry is appended (through the application's connection, inside its transaction;
on Redis and the memory store at once, with no transaction to join) and how the relay is
woken are the driver's own (``_postgres.outbox``, ``_sqlite.outbox``, ``_redis.outbox``);
what the relay does with the entries is written once here.
"""

from __future__ import annotations

from collections.abc import Sequence

from ferry.drivers._columns import from_json_text
from ferry.drivers._stores.statements import Statements
from ferry.drivers.protocol import OutboxEntry


class StatementOutboxRelay:
    """The outbox (a table, or Redis' entry hashes) as a relay reads it, through the
    driver's own connections."""

    def __init__(self, statements: Statements) -> None:
        self._s = statements

    async def claim(self, *, relay_id: str, lease_ms: int, limit: int) -> list[OutboxEntry]:
        now = self._s.clock.now_ms()
        rows = await self._s.write(
            "outbox_claim", relay_id=relay_id, now=now, until=now + lease_ms, limit=max(limit, 0)
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
        return sorted(entries, key=lambda e: int(e.id))  # RETURNING is unordered

    async def mark_published(self, ids: Sequence[str], *, relay_id: str) -> list[str]:
        entries = [int(i) for i in ids if i.isascii() and i.isdigit()]
        if not entries:
            return []
        rows = await self._s.write(
            "outbox_mark_published", ids=entries, relay_id=relay_id, now=self._s.clock.now_ms()
        )
        return [str(row["id"]) for row in rows]

    async def publish_failed(self, entry_id: str, *, relay_id: str, error: str) -> None:
        if entry_id.isascii() and entry_id.isdigit():
            await self._s.write(
                "outbox_publish_failed", id=int(entry_id), relay_id=relay_id, error=error
            )

    async def pending(self) -> int:
        rows = await self._s.read("outbox_pending")
        return int(rows[0]["pending"])
