"""The outbox under the prefix — and what ``append`` means on a store with no transactions.

Redis cannot join the application's database transaction, so an append cannot vanish
with a rollback. ``append(connection=None)`` writes the entry at once (durable as the
server's AOF setting makes it) and wakes the relay; ``append`` with a connection is
refused with ``X_DRIVER_NO_TRANSACTIONS`` rather than silently not joining it. For
"publish only if the business write committed", keep the outbox in the application's SQL
database (``postgres_job_driver(...).outbox``) and let the relay publish to Redis. What
the relay does with the entries is ``_stores.outbox``'s, over the scripts of the same names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ferry.drivers._outbox import SyncAppend, entry_parameters
from ferry.drivers._refusals import no_transaction_to_join
from ferry.drivers._stores.outbox import StatementOutboxRelay
from ferry.drivers._stores.statements import Statements
from ferry.drivers._wake import ChannelWake


class RedisOutbox(SyncAppend, StatementOutboxRelay):
    """Entries ``{prefix}:outbox:<id>``; ``new`` (by id), ``leased`` (by lease expiry) and
    ``published`` (by publish instant) index them."""

    def __init__(self, statements: Statements, wake: Callable[[], ChannelWake]) -> None:
        super().__init__(statements)
        self._wake = wake

    async def append(self, type: str, payload: Any, *, connection: Any) -> str:
        parameters = entry_parameters(type, payload, now_ms=self._s.clock.now_ms())
        if connection is not None:
            raise no_transaction_to_join(
                f'outbox append of "{type}"',
                "redis",
                "append with connection=None (the entry is written at once), or keep the "
                "outbox in the application's SQL database (postgres_job_driver(...).outbox, "
                "sqlite_job_driver(...).outbox) so the entry commits with the business write",
            )
        [row] = await self._s.write("outbox_append", **parameters)
        return str(row["id"])

    def wake(self) -> ChannelWake:
        """The driver's pub/sub session, on the outbox channel."""
        return self._wake()
