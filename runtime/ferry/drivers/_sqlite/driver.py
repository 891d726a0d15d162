"""``sqlite_job_driver()``: the durable ``JobDriver`` on one SQLite file, no server at all.

Every process on one host that opens the same file shares one queue: claims, settles,
slots and the scheduler's lease are fenced by SQLite's write lock on the file, so several
worker processes (and a scheduler, a relay, the dashboard) cooperate exactly as they do on
Postgres. The claim is one ``UPDATE … RETURNING`` statement; a batch of settles or
renewals is one transaction; instants come from the driver's clock, never SQLite's.
Read the statements themselves in ``sql/queries``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from urllib.parse import quote

from ferry._checks import require_count
from ferry._clock import Clock, SystemClock
from ferry._payload import DEFAULT_MAX_PAYLOAD_BYTES, payload_limit
from ferry.drivers._ledger import LedgerState, Migration
from ferry.drivers._refusals import shared_connection
from ferry.drivers._retention import pruned_in_batches
from ferry.drivers._sqlite import runs
from ferry.drivers._sqlite.children import SqliteChildren
from ferry.drivers._sqlite.database import Database
from ferry.drivers._sqlite.introspect import SqliteIntrospection
from ferry.drivers._sqlite.joined import joined_connection
from ferry.drivers._sqlite.migrate import known_migrations
from ferry.drivers._sqlite.outbox import SqliteOutbox
from ferry.drivers._sqlite.rates import SqliteRateBuckets
from ferry.drivers._sqlite.records import SqliteLeaseStore, SqliteRecordStore
from ferry.drivers._sqlite.results import SqliteResults
from ferry.drivers._sqlite.slots import SqliteSlotStore
from ferry.drivers._sqlite.steps import SqliteStepStore
from ferry.drivers._sqlite.target import SqliteTarget, Synchronous, sqlite_target
from ferry.drivers._sqlite.transfer import SqliteTransfer
from ferry.drivers._sqlite.wake import DEFAULT_WAKE_POLL_MS, CommitWatcher, SqliteWake
from ferry.drivers._wake import SettleWaiters
from ferry.drivers.protocol import (
    ClaimedJob,
    ClaimOptions,
    EnqueueRequest,
    EnqueueResult,
    PruneReport,
    QueueStats,
    RecordWrite,
    Renewal,
    RenewalAnswer,
    RetentionPolicy,
    Settle,
)
from ferry.drivers.settle import DerivedCalls


class SqliteJobDriver(DerivedCalls):
    """Every stored thing of ferry in one SQLite file, over a writer and a reader."""

    def __init__(
        self, target: SqliteTarget, *, clock: Clock, wake_poll_ms: int, max_payload_bytes: int
    ) -> None:
        require_count(
            wake_poll_ms, what="sqlite wake_poll_ms {}", fix="pass wake_poll_ms=20 (the default)"
        )
        self._clock = clock
        self._max_payload_bytes = payload_limit(max_payload_bytes)
        self._db = Database(target, clock=clock)
        self._watcher = CommitWatcher(target, clock=clock, poll_ms=wake_poll_ms)
        self._steps = SqliteStepStore(self._db)
        # The capabilities it offers (``ferry.drivers.capabilities``): all of them.
        self.slots = SqliteSlotStore(self._db)
        self.rates = SqliteRateBuckets(self._db)
        self.leases = SqliteLeaseStore(self._db)
        self.records = SqliteRecordStore(self._db)
        self.introspect = SqliteIntrospection(self._db, self._moved)
        self.outbox = SqliteOutbox(self._db, self._watcher.outbox, self._watch)
        self.transfer = SqliteTransfer(self._db, self._watcher.runs.announce)
        self.results = SqliteResults(self._db, self._news)
        self.children = SqliteChildren(self._db, self._moved)

    @property
    def name(self) -> str:
        return "sqlite"

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def path(self) -> str:
        """The database file (absolute): the file an application's connection must open to
        enqueue or append to the outbox in its own transaction."""
        return str(self._db.target.path)

    @property
    def location(self) -> str:
        """``sqlite:////absolute/path.db`` with symbolic links resolved: two drivers on one
        file answer alike, however their paths were spelled (``ferry jobs drain``)."""
        return "sqlite:///" + quote(os.path.realpath(self._db.target.path))

    @property
    def where(self) -> str:
        """The file, as messages name it."""
        return f'database "{self._db.target.path}"'

    @property
    def max_payload_bytes(self) -> int:
        return self._max_payload_bytes

    @property
    def steps(self) -> SqliteStepStore:
        return self._steps

    @property
    def migrations(self) -> tuple[Migration, ...]:
        """Every migration this ferry ships for SQLite."""
        return known_migrations()

    async def open(self) -> None:
        """Open the file (creating it) and apply pending migrations; every other method
        does this first."""
        await self._db.open()

    async def migrate(self) -> list[int]:
        """Apply pending migrations now; answers the versions this call applied."""
        return [migration.version for migration in await self._db.migrate()]

    async def inspect(self) -> tuple[str, LedgerState]:
        """The database and its judged ledger, changing nothing (``ferry doctor``)."""
        return await self._db.inspect()

    async def database_now_ms(self) -> int | None:
        """None: a SQLite file has no clock of its own, every process on the host reads
        the same one (``ferry doctor`` skips the skew check)."""
        return None

    def wake(self) -> SqliteWake:
        """This process's wake-up source for idle workers (watching once called)."""
        self._watch()
        return self._watcher.runs

    def _watch(self) -> None:
        self._db.check_open()
        self._watcher.start()

    def _news(self) -> SettleWaiters:
        """The waiters on runs ending (watching once called)."""
        self._watch()
        return self._watcher.ended

    async def enqueue(self, request: EnqueueRequest) -> EnqueueResult:
        return (await self.enqueue_many([request]))[0]

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        """Two statements whatever the batch size (the write, then the runs holding keys
        it skipped), on the driver's writer — or on the application's ``aiosqlite``
        connection given as ``connection=``, inside its transaction."""
        if not requests:
            return []
        connection = shared_connection(requests)
        batch = runs.EnqueueBatch(requests)
        if connection is None:
            queries = self._db.queries
            results = await self._db.transaction(
                lambda c: runs.enqueue(c, queries, batch, self._clock.now_ms())
            )
            if batch.woke:
                self._watcher.runs.announce()
            if batch.due_later is not None:
                # This process's waiters wake when it falls due; another process's find it
                # at their idle poll (the watcher sees a commit, not its run_at).
                self._watcher.runs.expect(batch.due_later)
            return results
        joined = await joined_connection(
            connection, self._db, what=f'enqueue of job "{requests[0].name}"'
        )
        now = self._clock.now_ms()
        # The commit is the application's, so this process learns of it by the poll.
        while (insert := batch.insert(now)) is not None:
            if (supersede := batch.supersede(now)) is not None:
                await joined.execute_fetchall(self._db.queries["enqueue_supersede"], supersede)
            written = await joined.execute_fetchall(self._db.queries["enqueue"], insert)
            existing = batch.inserted(written, now)
            if existing is not None:
                batch.existing(
                    await joined.execute_fetchall(self._db.queries["enqueue_existing"], existing)
                )
        return batch.results()

    async def claim(self, options: ClaimOptions) -> list[ClaimedJob]:
        """One ``UPDATE … RETURNING``; with ``options.limits`` it also takes each keyed
        run's slot and skips runs whose key is full (``worker_claim``), and with
        ``options.rates`` applies each rated key's window to the runs it leased — one
        transaction."""
        queries = self._db.queries
        return await self._db.transaction(
            lambda c: runs.claim(c, queries, options, self._clock.now_ms())
        )

    async def settle_many(self, settles: Sequence[Settle]) -> list[bool]:
        queries = self._db.queries
        landed, moved = await self._db.transaction(
            lambda c: runs.settle(c, queries, settles, self._clock.now_ms())
        )
        self._moved(moved)
        return landed

    async def settle_and_claim(
        self, settles: Sequence[Settle], options: ClaimOptions
    ) -> tuple[list[bool], list[ClaimedJob]]:
        """The settles, then the claim, in one transaction on one trip to the writer: a
        slot a settle released is claimable by the same call."""
        queries = self._db.queries

        def both(c: sqlite3.Connection) -> tuple[list[bool], runs.Moved, list[ClaimedJob]]:
            now = self._clock.now_ms()
            landed, moved = runs.settle(c, queries, settles, now)
            return landed, moved, runs.claim(c, queries, options, now)

        landed, moved, claimed = await self._db.transaction(both)
        self._moved(moved)
        return landed, claimed

    def _moved(self, moved: runs.Moved) -> None:
        """Tell this process what a committed transaction moved: idle workers wake for a
        run due now, result waiters hear of the runs that ended (other processes learn
        both through their watchers)."""
        if moved.woke:
            self._watcher.runs.announce()
        if moved.ended:
            self._watcher.ended.settled(moved.ended)

    async def heartbeat_many(
        self, renewals: Sequence[Renewal], *, record: RecordWrite | None = None
    ) -> list[RenewalAnswer]:
        queries = self._db.queries
        return await self._db.transaction(
            lambda c: runs.renew(c, queries, renewals, self._clock.now_ms(), record)
        )

    async def stats(self) -> list[QueueStats]:
        return await self.introspect.stats()

    async def prune(self, policy: RetentionPolicy) -> PruneReport:
        """Delete in batches of ``policy.batch`` rows, each its own short transaction, until
        a batch comes back short. Idempotency keys dedupe only against rows still here,
        so a key is free again once its run has been pruned."""
        require_count(policy.batch, what="prune batch {}", fix="pass batch=1000 (the default)")
        now = self._clock.now_ms()

        async def batches(query: str, retention_ms: int | None) -> int:
            async def delete_before(cutoff_ms: int, batch: int) -> int:
                return await self._db.changes(query, {"before": cutoff_ms, "batch": batch})

            return await pruned_in_batches(
                delete_before, retention_ms, now_ms=now, batch=policy.batch
            )

        return PruneReport(
            completed=await batches("prune_completed", policy.completed_ms),
            dead=await batches("prune_dead", policy.dead_ms),
            slots=await self._db.changes("prune_lease_slots", {"now": now}),
            outbox=await batches("outbox_prune", policy.published_outbox_ms),
            webhook_attempts=await batches("prune_log", policy.webhook_attempts_ms),
            records=await batches("prune_records", 0),
            rates=await self._db.changes("prune_rate_windows", {"now": now}),
        )

    async def close(self) -> None:
        await self._watcher.close()
        await self._db.close()


def sqlite_job_driver(
    path_or_url: str | os.PathLike[str],
    *,
    clock: Clock | None = None,
    synchronous: Synchronous | None = None,
    busy_timeout_ms: int | None = None,
    wake_poll_ms: int = DEFAULT_WAKE_POLL_MS,
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
) -> SqliteJobDriver:
    """A driver on one SQLite file; it opens (creating the file) and migrates on first use.

    ``path_or_url`` is a path or a ``sqlite:///relative.db`` / ``sqlite:////absolute.db``
    URL (whose ``?synchronous=`` and ``?busy_timeout_ms=`` the keywords override).
    ``synchronous="full"`` (the default) makes every commit durable through a power cut;
    ``"normal"`` only through a crash of the process, for fewer fsyncs. ``busy_timeout_ms``
    (default 5000) is how long a statement waits for another connection's write lock.
    ``wake_poll_ms`` (default 20) bounds how late an idle worker hears of another
    process's commit. ``max_payload_bytes`` limits one payload's JSON text (1 MiB).
    """
    target = sqlite_target(path_or_url, synchronous=synchronous, busy_timeout_ms=busy_timeout_ms)
    return SqliteJobDriver(
        target,
        clock=clock or SystemClock(),
        wake_poll_ms=wake_poll_ms,
        max_payload_bytes=max_payload_bytes,
    )
