"""``postgres_outbox()``: the outbox table in the application's own database.

``append`` writes through the caller's connection, inside the caller's transaction, so
the entry exists exactly when the business write does. The relay reads the same table
through the store's own pool. The outbox database need not be the queue's: the relay
publishes to whatever job driver is configured.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg

from ferry._clock import Clock, SystemClock
from ferry._outbox.entry import OutboxEntry
from ferry._payload import to_json
from ferry.drivers._postgres.columns import from_json_text, json_text
from ferry.drivers._postgres.database import Database, Pool
from ferry.drivers._postgres.wake import QueueWake
from ferry.errors import FerryError

_CHANNEL_SUFFIX = "_outbox"
_MAX_CHANNEL = 63  # PostgreSQL's longest identifier; pg_notify refuses a longer channel


class PostgresOutbox:
    """The ``outbox`` table of one ferry schema."""

    def __init__(self, target: str | Pool, *, schema: str, clock: Clock, pool_max_size: int):
        self._db = Database(target, schema=schema, clock=clock, pool_max_size=pool_max_size)
        self.channel = f"{schema}{_CHANNEL_SUFFIX}"
        if len(self.channel) > _MAX_CHANNEL:
            raise FerryError(
                "X_INVARIANT",
                f'postgres schema name "{schema}" is too long for its outbox channel',
                f"use a schema name of at most {_MAX_CHANNEL - len(_CHANNEL_SUFFIX)} characters",
            )
        self._wake: QueueWake | None = None

    @property
    def clock(self) -> Clock:
        return self._db.clock

    async def open(self) -> None:
        """Connect and apply pending migrations (``append`` and the relay do this first)."""
        await self._db.open()

    async def append(self, type: str, payload: Any, *, connection: Any) -> str:
        """Write one entry in ``connection``'s open transaction; answers its id.

        Rolled back, the entry never existed; committed, the relay publishes it.
        """
        if not isinstance(type, str) or not type or type != type.strip():
            raise FerryError(
                "X_INVARIANT",
                f"outbox entry type {type!r} must be a non-empty string without surrounding spaces",
                'name what happened or which job consumes it, e.g. type="send_receipt"',
            )
        document = to_json(payload, what=f'outbox entry "{type}" payload')
        if not isinstance(connection, asyncpg.Connection):  # pool proxies pass this too
            raise FerryError(
                "X_DRIVER_NO_TRANSACTIONS",
                f'outbox append of "{type}" was given a {_type_name(connection)}, '
                "not an asyncpg connection, so it cannot join the caller's transaction",
                "pass connection=conn inside `async with conn.transaction():`",
            )
        if not connection.is_in_transaction():
            # Outside a transaction the entry commits on its own, whatever becomes of the
            # business write it announces: exactly the gap the outbox exists to close.
            raise FerryError(
                "X_INVARIANT",
                f'outbox append of "{type}" ran outside a transaction',
                "append inside `async with conn.transaction():`, with the business write",
            )
        await self._db.open()
        entry_id: str = await connection.fetchval(
            self._db.queries["outbox_append"],
            type,
            json_text(document),
            self.clock.now_ms(),
            self.channel,
        )
        return entry_id

    def wake(self) -> QueueWake:
        """One LISTEN session on the outbox channel, started on first call."""
        self._db.check_open()
        if self._wake is None:
            self._wake = QueueWake(self._db.listen_session, self.channel, clock=self.clock)
            self._wake.start()
        return self._wake

    async def claim(self, *, relay_id: str, lease_ms: int, limit: int) -> list[OutboxEntry]:
        pool = await self._db.pool()
        now = self.clock.now_ms()
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
            self.clock.now_ms(),
        )
        return [str(row["id"]) for row in rows]

    async def publish_failed(self, entry_id: str, *, relay_id: str, error: str) -> None:
        pool = await self._db.pool()
        await pool.execute(
            self._db.queries["outbox_publish_failed"], int(entry_id), relay_id, error
        )

    async def prune(self, *, published_before_ms: int, batch: int) -> int:
        pool = await self._db.pool()
        pruned = 0
        while True:
            deleted: int = await pool.fetchval(
                self._db.queries["outbox_prune"], published_before_ms, batch
            )
            pruned += deleted
            if deleted < batch:
                return pruned

    async def pending(self) -> int:
        """How many entries are not yet published."""
        pool = await self._db.pool()
        count: int = await pool.fetchval(self._db.queries["outbox_pending"])
        return count

    async def close(self) -> None:
        """Stop listening and close the pool if this store created it."""
        if self._wake is not None:
            await self._wake.close()
        await self._db.close()


def _type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def postgres_outbox(
    dsn_or_pool: str | Pool,
    *,
    schema: str = "ferry",
    clock: Clock | None = None,
    pool_max_size: int = 4,
) -> PostgresOutbox:
    """An outbox in the application's database; it connects and migrates on first use.

    Given a DSN it creates (and on ``close`` closes) its pool; a pool it borrows.
    """
    return PostgresOutbox(
        dsn_or_pool, schema=schema, clock=clock or SystemClock(), pool_max_size=pool_max_size
    )
