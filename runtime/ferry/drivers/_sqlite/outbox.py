"""The outbox table in the driver's file.

``append`` writes through the application's ``aiosqlite`` connection, inside its open
transaction, so the entry exists exactly when the business write does: the commit is the
publish. The relay reads the same table through the driver's own connections and is woken
by the watcher's poll (``wake``) once the commit lands.
"""

from __future__ import annotations

from typing import Any

from ferry.drivers._outbox import SyncAppend, entry_parameters, outside_transaction
from ferry.drivers._refusals import no_transaction_to_join
from ferry.drivers._sqlite.database import Database
from ferry.drivers._sqlite.joined import joined_connection
from ferry.drivers._sqlite.wake import SqliteWake
from ferry.drivers._stores.outbox import StatementOutboxRelay


class SqliteOutbox(SyncAppend, StatementOutboxRelay):
    """``ferry_outbox``; woken by the driver's commit watcher."""

    def __init__(self, database: Database, wake: SqliteWake, start_watching: Any) -> None:
        super().__init__(database)
        self._db = database
        self._wake = wake
        self._start_watching = start_watching

    async def append(self, type: str, payload: Any, *, connection: Any) -> str:
        parameters = entry_parameters(type, payload, now_ms=self._db.clock.now_ms())
        if self._db.target.memory:
            return await self._append_in_memory(type, parameters, connection)
        joined = await joined_connection(connection, self._db, what=f'outbox append of "{type}"')
        if not joined.in_transaction:
            raise outside_transaction(
                type,
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
        [[entry_id]] = await self._db.write("outbox_append", **parameters)
        self._wake.announce()
        return str(entry_id)

    def wake(self) -> SqliteWake:
        """Woken when another connection (the application's) commits to the file."""
        self._start_watching()
        return self._wake
