"""What the Postgres and SQLite drivers share above their statements: the clock and the
payload limit, the ledger's calls, and every store written once in ``ferry.drivers._stores``.

Each driver keeps what is its own: its connections, the wake and the news of runs ending,
how an enqueue or an outbox append joins the application's transaction, a fan-out, what a
change of runs' states means beyond their rows (``RunMoves``), and the claim/settle path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ferry._clock import Clock
from ferry._payload import payload_limit
from ferry.drivers._ledger import LedgerState, Migration
from ferry.drivers._stores.actions import PlannedActions
from ferry.drivers._stores.introspect import StatementIntrospection
from ferry.drivers._stores.moves import Moved, RunMoves
from ferry.drivers._stores.prune import prune
from ferry.drivers._stores.rates import StatementRateBuckets
from ferry.drivers._stores.records import StatementLeaseStore, StatementRecordStore
from ferry.drivers._stores.results import StatementResults
from ferry.drivers._stores.slots import StatementSlotStore
from ferry.drivers._stores.statements import Transactional
from ferry.drivers._stores.steps import StatementStepStore
from ferry.drivers._stores.transfer import StatementTransfer, in_one_transaction
from ferry.drivers._wake import SettleWaiters
from ferry.drivers.protocol import PruneReport, QueueStats, RetentionPolicy
from ferry.drivers.settle import DerivedCalls


class Database(Transactional, Protocol):
    """A SQL driver's store: its statements, and its migration ledger."""

    async def migrate(self) -> list[Migration]: ...

    async def inspect(self) -> tuple[str, LedgerState]: ...


class SqlJobDriver(DerivedCalls):
    """The part of a SQL driver written once; ``moves`` follows the runs a store moved
    (the dialect's ``RunMoves``), ``news`` is the driver's waiters on runs ending."""

    def __init__(
        self,
        database: Database,
        *,
        clock: Clock,
        max_payload_bytes: int,
        moves: RunMoves,
        news: Callable[[], SettleWaiters],
    ) -> None:
        self._store = database
        self._clock = clock
        self._max_payload_bytes = payload_limit(max_payload_bytes)
        self._steps = StatementStepStore(database)
        # The capabilities it offers (``ferry.drivers.capabilities``): all of them (the
        # outbox and children are each driver's own: the outbox joins the application's
        # transaction, and a fan-out is each dialect's).
        self.slots = StatementSlotStore(database)
        self.rates = StatementRateBuckets(database)
        self.leases = StatementLeaseStore(database)
        self.records = StatementRecordStore(database)
        self.introspect = StatementIntrospection(database, PlannedActions(database, moves))
        self.transfer = StatementTransfer(
            database, lambda: moves.committed(Moved(woke=True)), in_one_transaction(database)
        )
        self.results = StatementResults(database, news)

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def max_payload_bytes(self) -> int:
        return self._max_payload_bytes

    @property
    def steps(self) -> StatementStepStore:
        return self._steps

    async def open(self) -> None:
        """Connect (SQLite: open the file, creating it) and apply pending migrations; every
        other method does this first."""
        await self._store.open()

    async def migrate(self) -> list[int]:
        """Apply pending migrations now; answers the versions this call applied."""
        return [migration.version for migration in await self._store.migrate()]

    async def inspect(self) -> tuple[str, LedgerState]:
        """The database and its judged ledger, changing nothing (``ferry doctor``)."""
        return await self._store.inspect()

    async def stats(self) -> list[QueueStats]:
        return await self.introspect.stats()

    async def prune(self, policy: RetentionPolicy) -> PruneReport:
        return await prune(self._store, policy)
