"""``postgres_job_driver()``: the durable ``JobDriver``, one statement per operation.

Enqueue, claim, each settle and each heartbeat are one round trip, whatever the batch
size; instants come from the driver's clock as parameters, never from the server's
``now()``. Read the statements themselves in ``sql/queries``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import asyncpg

from ferry._clock import Clock, SystemClock
from ferry._duration import Duration, to_ms
from ferry._payload import DEFAULT_MAX_PAYLOAD_BYTES, payload_limit
from ferry.drivers._postgres.backfills import PostgresBackfillLedger
from ferry.drivers._postgres.columns import (
    from_json_text,
    json_text,
    progress_columns,
    run_pk,
)
from ferry.drivers._postgres.database import Database, Pool
from ferry.drivers._postgres.introspect import PostgresIntrospection
from ferry.drivers._postgres.leases import PostgresLeaseStore
from ferry.drivers._postgres.steps import PostgresStepStore
from ferry.drivers._postgres.wake import QueueWake
from ferry.drivers.protocol import (
    AckOptions,
    ClaimedJob,
    ClaimOptions,
    EnqueueRequest,
    EnqueueResult,
    HeartbeatOptions,
    JobState,
    NackOptions,
    NackOutcome,
    QueueStats,
)
from ferry.errors import FerryError

_NACK_STATE: Mapping[NackOutcome, JobState] = {
    "retry": "queued",
    "dead": "dead",
    "interrupted": "queued",
    "sleep": "sleeping",
    "deferred": "queued",
    "cancelled": "cancelled",
}
_UNCOUNTED: frozenset[NackOutcome] = frozenset({"interrupted", "sleep", "deferred"})


class _Fetches(Protocol):
    """A pool or a caller's connection: where an enqueue runs."""

    async def fetch(self, query: str, *args: object) -> list[asyncpg.Record]: ...


class PostgresJobDriver:
    """Runs, steps, slots and paused queues in one PostgreSQL schema."""

    def __init__(
        self,
        target: str | Pool,
        *,
        schema: str,
        clock: Clock,
        retain_completed: Duration,
        pool_max_size: int,
        max_payload_bytes: int,
    ) -> None:
        self._clock = clock
        self._max_payload_bytes = payload_limit(max_payload_bytes)
        self._retain_completed_ms = to_ms(retain_completed, what="retain_completed")
        self._db = Database(target, schema=schema, clock=clock, pool_max_size=pool_max_size)
        self._steps = PostgresStepStore(self._db)
        self._leases = PostgresLeaseStore(self._db)
        self._backfills = PostgresBackfillLedger(self._db)
        self._introspect = PostgresIntrospection(self._db)
        self._wake: QueueWake | None = None

    @property
    def name(self) -> str:
        return "postgres"

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def schema(self) -> str:
        """The schema holding this driver's tables."""
        return self._db.queries.schema

    @property
    def max_payload_bytes(self) -> int:
        return self._max_payload_bytes

    @property
    def steps(self) -> PostgresStepStore:
        return self._steps

    @property
    def backfills(self) -> PostgresBackfillLedger:
        return self._backfills

    @property
    def leases(self) -> PostgresLeaseStore:
        return self._leases

    @property
    def introspect(self) -> PostgresIntrospection:
        return self._introspect

    async def open(self) -> None:
        """Connect and apply pending migrations; every other method does this first."""
        await self._db.open()

    async def migrate(self) -> list[int]:
        """Apply pending migrations now; answers the versions this call applied."""
        return [migration.version for migration in await self._db.migrate()]

    def wake(self) -> QueueWake:
        """This driver's one LISTEN session on its schema's channel, listening once called
        (again after a ``close`` of the wake, e.g. by a worker that stopped and restarts)."""
        self._db.check_open()
        if self._wake is None:
            self._wake = QueueWake(
                self._db.listen_session, self._db.queries.channel, clock=self._clock
            )
        self._wake.start()
        return self._wake

    async def enqueue(self, request: EnqueueRequest) -> EnqueueResult:
        return (await self.enqueue_many([request]))[0]

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        if not requests:
            return []
        session = await self._session_for(requests)
        first: dict[str, int] = {}  # key -> the request that writes it; later ones dedupe
        for index, request in enumerate(requests):
            first.setdefault(request.idempotency_key, index)
        runs: dict[str, EnqueueResult] = {}
        pending = [requests[i] for i in first.values()]
        while pending:
            columns = _columns(map(_enqueue_row, pending))
            written = await session.fetch(
                self._db.queries["enqueue"], *columns, self._clock.now_ms()
            )
            runs.update((r["idempotency_key"], EnqueueResult(r["id"], False)) for r in written)
            taken = [r.idempotency_key for r in pending if r.idempotency_key not in runs]
            if taken:
                existing = await session.fetch(self._db.queries["enqueue_existing"], taken)
                runs.update((r["idempotency_key"], EnqueueResult(r["id"], True)) for r in existing)
            # A run pruned between the two statements left its key free: write it again.
            pending = [r for r in pending if r.idempotency_key not in runs]
        return [
            EnqueueResult(runs[r.idempotency_key].job_id, True)
            if first[r.idempotency_key] != index
            else runs[r.idempotency_key]
            for index, r in enumerate(requests)
        ]

    async def claim(self, options: ClaimOptions) -> list[ClaimedJob]:
        return await self._claim("claim", options)

    async def claim_within_limits(
        self, options: ClaimOptions, limits: Mapping[str, int]
    ) -> list[ClaimedJob]:
        """``claim``, also taking each keyed run's slot of ``limits[name]`` in the statement.

        Runs whose key is full are skipped, never claimed to be deferred (``worker_claim``).
        """
        return await self._claim("worker_claim", options, list(limits), list(limits.values()))

    async def _claim(self, query: str, options: ClaimOptions, *extra: object) -> list[ClaimedJob]:
        pool = await self._db.pool()
        now = self._clock.now_ms()
        rows = await pool.fetch(
            self._db.queries[query],
            options.worker_id,
            now,
            now + options.lease_ms,
            max(options.limit, 0),
            list(options.queues) if options.queues is not None else None,
            list(options.names) if options.names is not None else None,
            *extra,
        )
        return [_claimed(row) for row in rows]

    async def ack(self, job_id: str, options: AckOptions) -> bool:
        return (await self.settle_many([(job_id, options)]))[0]

    async def nack(self, job_id: str, options: NackOptions) -> bool:
        return (await self.settle_many([(job_id, options)]))[0]

    async def settle_many(
        self, settles: Sequence[tuple[str, AckOptions | NackOptions]]
    ) -> list[bool]:
        """Ack and nack many attempts in one round trip; answers, in order, which landed."""
        pool = await self._db.pool()
        pks = [run_pk(job_id) for job_id, _ in settles]
        first: dict[int, int] = {}  # run -> its first settle; a repeat lands nowhere, as if
        for index, pk in enumerate(pks):  # it were a second call after the first
            if pk is not None:
                first.setdefault(pk, index)
        landed: set[int] = set()
        if first:
            now = self._clock.now_ms()
            columns = _columns(_settle_row(pk, settles[i][1], now) for pk, i in first.items())
            settled = await pool.fetch(self._db.queries["settle"], *columns, now)
            landed = {row["id"] for row in settled}
        return [pk is not None and pk in landed and first[pk] == i for i, pk in enumerate(pks)]

    async def heartbeat(self, job_id: str, options: HeartbeatOptions) -> bool:
        pk = run_pk(job_id)
        pool = await self._db.pool()
        if pk is None:
            return False
        now = self._clock.now_ms()
        row = await pool.fetchrow(
            self._db.queries["heartbeat"],
            pk,
            options.worker_id,
            now,
            now + options.lease_ms,
            *progress_columns(options.progress),
        )
        assert row is not None
        if row["cancel_requested"] and options.on_cancel_requested is not None:
            options.on_cancel_requested()
        return bool(row["landed"])

    async def stats(self) -> list[QueueStats]:
        return await self._introspect.stats()

    async def prune(self, *, batch: int = 1000) -> int:
        """Delete completed and cancelled runs finished over ``retain_completed`` ago.

        Deletes in batches of ``batch`` rows (short transactions, short locks) until a
        batch comes back short; answers how many runs went. Dead runs stay: dead letters
        are for people to read and retry. Idempotency keys dedupe only against rows still
        here, so a key is free again once its run has been pruned.
        """
        if batch < 1:
            raise FerryError(
                "X_INVARIANT",
                f"prune batch {batch} is not a positive number of rows",
                "pass batch=1000 (the default) or another positive number",
            )
        pool = await self._db.pool()
        now = self._clock.now_ms()
        cutoff = now - self._retain_completed_ms
        pruned = 0
        while True:
            deleted: int = await pool.fetchval(self._db.queries["prune_jobs"], cutoff, batch)
            pruned += deleted
            if deleted < batch:
                break
        await pool.execute(self._db.queries["prune_lease_slots"], now)
        return pruned

    async def close(self) -> None:
        if self._wake is not None:
            await self._wake.close()
        await self._db.close()

    async def _session_for(self, requests: Sequence[EnqueueRequest]) -> _Fetches:
        """The caller's connection when the requests join its transaction, else the pool."""
        connection = requests[0].connection
        if any(r.connection is not connection for r in requests):
            raise FerryError(
                "X_INVARIANT",
                f"enqueue_many got {len(requests)} requests that join different transactions",
                "pass one connection= for the whole batch, or enqueue them separately",
            )
        pool = await self._db.pool()
        if connection is None:
            return pool
        if not isinstance(connection, asyncpg.Connection):  # pool proxies pass this too
            raise FerryError(
                "X_DRIVER_NO_TRANSACTIONS",
                f'enqueue of job "{requests[0].name}" asked to join a transaction on a '
                f"{type(connection).__name__}, which is not an asyncpg connection",
                "pass the asyncpg connection whose transaction the run must join, e.g. "
                "connection=conn inside `async with conn.transaction():`",
            )
        return connection


def _columns(rows: Iterable[tuple[Any, ...]]) -> list[list[Any]]:
    """Rows turned into one list per column: the arrays a batch statement unnests."""
    return [list(column) for column in zip(*rows, strict=True)]


def _enqueue_row(r: EnqueueRequest) -> tuple[Any, ...]:
    """One request as the ``enqueue`` statement's array elements, in parameter order."""
    return (
        r.name,
        r.queue,
        r.payload_json if r.payload_json is not None else json_text(r.payload),
        r.idempotency_key,
        r.max_attempts,
        r.run_at_ms,
        r.tenant,
        r.actor,
        r.concurrency_key,
        r.priority,
    )


def _settle_row(pk: int, settle: AckOptions | NackOptions, now: int) -> tuple[Any, ...]:
    """One settle of run ``pk`` as the ``settle`` statement's array elements, in order."""
    progress = progress_columns(settle.progress)
    if isinstance(settle, AckOptions):
        result = json_text(settle.result)
        return (
            pk,
            settle.worker_id,
            "completed",
            0,
            None,
            result,
            None,
            None,
            *progress,
        )
    error = settle.error
    return (
        pk,
        settle.worker_id,
        _NACK_STATE[settle.outcome],
        1 if settle.outcome in _UNCOUNTED else 0,
        settle.run_at_ms if settle.run_at_ms is not None else now,
        None,
        error.code if error is not None else None,
        error.message if error is not None else None,
        *progress,
    )


def _claimed(row: asyncpg.Record) -> ClaimedJob:
    return ClaimedJob(
        id=row["id"],
        name=row["name"],
        queue=row["queue"],
        payload=from_json_text(row["payload"]),
        idempotency_key=row["idempotency_key"],
        attempt=row["attempts"],
        max_attempts=row["max_attempts"],
        tenant=row["tenant"],
        actor=row["actor"],
        concurrency_key=row["concurrency_key"],
        run_at_ms=row["run_at_ms"],
        created_at_ms=row["created_at_ms"],
        lease_expires_at_ms=row["lease_expires_at_ms"],
        slot_held=row.get("slot_held", False),
    )


def postgres_job_driver(
    dsn_or_pool: str | Pool,
    *,
    schema: str = "ferry",
    clock: Clock | None = None,
    retain_completed: Duration = "7d",
    pool_max_size: int = 10,
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
) -> PostgresJobDriver:
    """A driver on PostgreSQL; it connects and migrates on first use, not here.

    Given a DSN, it creates (and on ``close`` closes) a pool of up to ``pool_max_size``
    connections; given an ``asyncpg`` pool, it borrows it and never closes it.
    ``max_payload_bytes`` limits one enqueued payload's JSON text (default 1 MiB).
    """
    return PostgresJobDriver(
        dsn_or_pool,
        schema=schema,
        clock=clock or SystemClock(),
        retain_completed=retain_completed,
        pool_max_size=pool_max_size,
        max_payload_bytes=max_payload_bytes,
    )
