"""The outbox table in the driver's schema.

``append`` writes through the caller's connection, inside the caller's transaction, so the
entry exists exactly when the business write does (``joined`` says which connections). The
relay reads the same table through the driver's own pool. The outbox database need not be
the queue's: a relay reads the outbox of one driver and publishes to whatever job driver is
configured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ferry.drivers._outbox import SyncAppend, entry_parameters
from ferry.drivers._postgres.database import Database
from ferry.drivers._postgres.joined import joined_session
from ferry.drivers._postgres.wake import ChannelWake
from ferry.drivers._stores.outbox import StatementOutboxRelay


class PostgresOutbox(SyncAppend, StatementOutboxRelay):
    """``outbox`` (migration 3); woken on the schema's outbox channel."""

    def __init__(self, database: Database, wake: Callable[[], ChannelWake]) -> None:
        super().__init__(database)
        self._db = database
        self._wake = wake

    async def append(self, type: str, payload: Any, *, connection: Any) -> str:
        parameters = entry_parameters(type, payload, now_ms=self._db.clock.now_ms())
        session = await joined_session(
            connection, self._db, what=f'outbox append of "{type}"', transaction=True
        )
        sql, arguments = self._db.queries.bind("outbox_append", parameters)
        [row] = await session.fetch(sql, *arguments)
        entry_id: str = row["id"]
        return entry_id

    def wake(self) -> ChannelWake:
        """The driver's LISTEN session, on the outbox channel."""
        return self._wake()
