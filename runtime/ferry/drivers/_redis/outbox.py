"""The outbox under the prefix — and what ``append`` means on a store with no transactions.

Redis cannot join the application's database transaction, so an append cannot vanish
with a rollback. ``append(connection=None)`` writes the entry at once (durable as the
server's AOF setting makes it) and wakes the relay; ``append`` with a connection is
refused with ``X_DRIVER_NO_TRANSACTIONS`` rather than silently not joining it. For
"publish only if the business write committed", keep the outbox in the application's SQL
database (``postgres_job_driver(...).outbox``) and let the relay publish to Redis.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ferry._clock import Clock
from ferry.drivers._outbox import SyncAppend, appended_under, checked_entry
from ferry.drivers._redis.codec import from_json_text, json_text, opt
from ferry.drivers._redis.connection import Connection
from ferry.drivers._refusals import no_transaction_to_join
from ferry.drivers._wake import ChannelWake
from ferry.drivers.protocol import OutboxEntry


class RedisOutbox(SyncAppend):
    """Entries ``{prefix}:outbox:<id>``; ``new`` (by id), ``leased`` (by lease expiry) and
    ``published`` (by publish instant) index them."""

    def __init__(
        self, connection: Connection, clock: Clock, wake: Callable[[], ChannelWake]
    ) -> None:
        self._connection = connection
        self._clock = clock
        self._wake = wake

    async def append(self, type: str, payload: Any, *, connection: Any) -> str:
        document = checked_entry(type, payload)
        if connection is not None:
            raise no_transaction_to_join(
                f'outbox append of "{type}"',
                "redis",
                "append with connection=None (the entry is written at once), or keep the "
                "outbox in the application's SQL database (postgres_job_driver(...).outbox, "
                "sqlite_job_driver(...).outbox) so the entry commits with the business write",
            )
        entry_id = await self._connection.run(
            "outbox_append",
            type,
            json_text(document),
            self._clock.now_ms(),
            opt(appended_under()),
        )
        return str(entry_id)

    def wake(self) -> ChannelWake:
        """The driver's pub/sub session, on the outbox channel."""
        return self._wake()

    async def claim(self, *, relay_id: str, lease_ms: int, limit: int) -> list[OutboxEntry]:
        now = self._clock.now_ms()
        rows = await self._connection.run(
            "outbox_claim", relay_id, now, now + lease_ms, max(limit, 0)
        )
        return [
            OutboxEntry(
                id=str(entry_id),
                type=entry_type,
                payload=from_json_text(payload),
                attempts=int(attempts),
                created_at_ms=int(created),
                traceparent=traceparent,
            )
            for entry_id, entry_type, payload, attempts, created, traceparent in rows
        ]

    async def mark_published(self, ids: Sequence[str], *, relay_id: str) -> list[str]:
        known = [i for i in ids if i.isascii() and i.isdigit()]
        if not known:
            return []
        marked = await self._connection.run(
            "outbox_mark_published", relay_id, self._clock.now_ms(), *known
        )
        return [str(i) for i in marked]

    async def publish_failed(self, entry_id: str, *, relay_id: str, error: str) -> None:
        if entry_id.isascii() and entry_id.isdigit():
            await self._connection.run("outbox_publish_failed", entry_id, relay_id, error)

    async def pending(self) -> int:
        new, leased = await self._connection.commands(
            ("ZCARD", self._connection.keys("outbox", "new")),
            ("ZCARD", self._connection.keys("outbox", "leased")),
        )
        return int(new) + int(leased)
