"""The outbox table in the driver's file.

``append`` writes through the application's ``aiosqlite`` connection, inside its open
transaction, so the entry exists exactly when the business write does: the commit is the
publish. The relay reads the same table through the driver's own connections and is woken
by the watcher's poll (``wake``) once the commit lands.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ferry.drivers._columns import from_json_text, json_text
from ferry.drivers._outbox import SyncAppend, appended_under, checked_entry
from ferry.drivers._refusals import no_transaction_to_join
from ferry.drivers._sqlite.database import Database
from ferry.drivers._sqlite.joined import joined_connection
from ferry.drivers._sqlite.wake import SqliteWake
from ferry.drivers.protocol import OutboxEntry
from ferry.errors import FerryError


class SqliteOutbox(SyncAppend):
    """``ferry_outbox``; woken by the driver's commit watcher."""

    def __init__(self, database: Database, wake: SqliteWake, start_watching: Any) -> None:
        self._db = database
        self._wake = wake
        self._start_watching = start_watching

    async def append(self, type: str, payload: Any, *, connection: Any) -> str:
        document = checked_entry(type, payload)
        parameters = {
            "type": type,
            "payload": json_text(document),
            "now": self._db.clock.now_ms(),
            "traceparent": appended_under(),
        }
        if self._db.target.memory:
            return await self._append_in_memory(type, parameters, connection)
        joined = await joined_connection(connection, self._db, what=f'outbox append of "{type}"')
        if not joined.in_transaction:
            # Outside a transaction the entry commits on its own, whatever becomes of the
            # business write it announces: exactly the gap the outbox exists to close.
            raise FerryError(
                "X_INVARIANT",
                f'outbox append of "{type}" ran outside a transaction',
                "append inside the transaction of the business write: `await conn.execute("
                '"BEGIN IMMEDIATE")`, the write, the append, then `await conn.commit()`',
            )
        [[entry_id]] = await joined.execute_fetchall(self._db.queries["outbox_append"], parameters)
        return str(entry_id)

    async def _append_in_memory(self, type: str, parameters: Any, connection: Any) -> str:
        """The memory store's append: written at once (it keeps nothing in the
        application's database, so there is no transaction to join)."""
        if connection is not None:
            raise no_transaction_to_join(
                f'outbox append of "{type}"',
                "memory",
                "use the postgres or sqlite driver's outbox for transactional appends; with "
                "the memory driver pass connection=None (the entry is written at once)",
            )
        [[entry_id]] = await self._db.execute("outbox_append", parameters)
        self._wake.announce()
        return str(entry_id)

    def wake(self) -> SqliteWake:
        """Woken when another connection (the application's) commits to the file."""
        self._start_watching()
        return self._wake

    async def claim(self, *, relay_id: str, lease_ms: int, limit: int) -> list[OutboxEntry]:
        now = self._db.clock.now_ms()
        parameters = {
            "relay_id": relay_id,
            "now": now,
            "lease_until": now + lease_ms,
            "limit": max(limit, 0),
        }
        rows = await self._db.execute("outbox_claim", parameters)
        return [
            OutboxEntry(
                id=row["id"],
                type=row["type"],
                payload=from_json_text(row["payload"]),
                attempts=row["attempts"],
                created_at_ms=row["created_at_ms"],
                traceparent=row["traceparent"],
            )
            for row in sorted(rows, key=lambda r: r["pk"])
        ]

    async def mark_published(self, ids: Sequence[str], *, relay_id: str) -> list[str]:
        if not ids:
            return []
        parameters = {
            "ids": json.dumps([int(i) for i in ids if i.isdigit()]),
            "relay_id": relay_id,
            "now": self._db.clock.now_ms(),
        }
        rows = await self._db.execute("outbox_mark_published", parameters)
        return [row["id"] for row in rows]

    async def publish_failed(self, entry_id: str, *, relay_id: str, error: str) -> None:
        if not entry_id.isdigit():
            return
        parameters = {"id": int(entry_id), "relay_id": relay_id, "error": error}
        await self._db.execute("outbox_publish_failed", parameters)

    async def pending(self) -> int:
        [[count]] = await self._db.fetch("outbox_pending")
        return int(count)
