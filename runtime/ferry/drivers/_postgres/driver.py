"""``postgres_job_driver()``: the durable ``JobDriver``, one statement per operation.

Enqueue, claim, a batch of settles and a batch of renewals are each one round trip,
whatever the batch size; instants come from the driver's clock as parameters, never from
the server's ``now()``. One pool serves every store and one LISTEN session every channel.
Read the statements themselves in ``sql/queries``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

from ferry._clock import Clock, SystemClock
from ferry._payload import DEFAULT_MAX_PAYLOAD_BYTES
from ferry.drivers._columns import (
    array_columns,
    json_text,
    progress_columns,
    run_of,
    run_pk,
    settle_columns,
    stored_columns,
)
from ferry.drivers._ledger import Migration
from ferry.drivers._postgres.children import PostgresChildren
from ferry.drivers._postgres.database import Database, Pool
from ferry.drivers._postgres.joined import Row, joined_session
from ferry.drivers._postgres.ledger import known_migrations
from ferry.drivers._postgres.location import pool_location, store_location
from ferry.drivers._postgres.moves import NotifiedMoves
from ferry.drivers._postgres.outbox import PostgresOutbox
from ferry.drivers._postgres.ready import ReadyTending
from ferry.drivers._postgres.wake import (
    IDLE_POLL_MAX_MS,
    IDLE_POLL_MAX_WAKE_PROVEN_MS,
    ChannelWake,
    Listener,
)
from ferry.drivers._refusals import shared_connection
from ferry.drivers._stores.driver import SqlJobDriver
from ferry.drivers._stores.enqueue import EnqueueBatch
from ferry.drivers._wake import SettleWaiters
from ferry.drivers.protocol import (
    SUPERSEDED_KEY_BYTES,
    AckOptions,
    ClaimedJob,
    ClaimOptions,
    EnqueueRequest,
    EnqueueResult,
    NackOptions,
    RecordWrite,
    Renewal,
    RenewalAnswer,
    Settle,
)
from ferry.drivers.settle import CANCELLED_BY_OPERATOR, first_of_each


class _Fetches(Protocol):
    """A pool or a caller's connection: where an enqueue runs."""

    async def fetch(self, query: str, *args: object) -> Sequence[Row]: ...


_STALE_REFILLS = 10
"""Claims a round trip adds at most when the one before dropped stale ready rows (runs
cancelled, reserved or re-timed since their row was written): a batch is filled past a
run of them, and a set of nothing but stale rows still costs a bounded round trip."""


class PostgresJobDriver(SqlJobDriver):
    """Every stored thing of ferry in one PostgreSQL schema, over one pool."""

    def __init__(
        self,
        target: str | Pool,
        *,
        schema: str,
        clock: Clock,
        pool_max_size: int,
        max_payload_bytes: int,
    ) -> None:
        self._db = Database(target, schema=schema, clock=clock, pool_max_size=pool_max_size)
        # Its statements notify (LISTEN/NOTIFY), so a store has no one else to wake.
        queries = self._db.queries
        self._listener = Listener(
            self._db.listen_session, [queries.channel, queries.outbox_channel], clock=clock
        )
        super().__init__(
            self._db,
            clock=clock,
            max_payload_bytes=max_payload_bytes,
            moves=NotifiedMoves(),
            news=self._news,
        )
        self._ready = ReadyTending(self._db)
        self.outbox = PostgresOutbox(self._db, lambda: self._channel(queries.outbox_channel))
        self._ended = SettleWaiters(
            self._listener,
            clock,
            idle_poll_ms=IDLE_POLL_MAX_WAKE_PROVEN_MS,
            unhealthy_poll_ms=IDLE_POLL_MAX_MS,
        )
        self.children = PostgresChildren(self._db)
        self._location = (
            store_location(target, queries.schema)
            if isinstance(target, str)
            else pool_location(target, queries.schema)
        )

    @property
    def name(self) -> str:
        return "postgres"

    @property
    def schema(self) -> str:
        """The schema holding this driver's tables."""
        return self._db.queries.schema

    @property
    def where(self) -> str:
        """The schema, as messages name it."""
        return f'schema "{self.schema}"'

    @property
    def migrations(self) -> tuple[Migration, ...]:
        """Every migration this ferry ships for Postgres."""
        return known_migrations()

    @property
    def location(self) -> str:
        return self._location

    async def database_now_ms(self) -> int:
        """The server's wall clock, in epoch ms (``ferry doctor``'s skew check)."""
        [[now]] = await self._db.read("server_clock")
        return int(now)

    def wake(self) -> ChannelWake:
        """This driver's one LISTEN session, on the runs channel; listening once called."""
        return self._channel(self._db.queries.channel)

    def _channel(self, channel: str) -> ChannelWake:
        self._db.check_open()
        return self._listener.wake(channel)

    def _news(self) -> SettleWaiters:
        """The waiters on runs ending, the LISTEN session following the ended channel from
        the first call (only processes that wait for results listen to it)."""
        self._db.check_open()
        self._listener.follow(self._db.queries.ended_channel, self._ended)
        return self._ended

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        """On the caller's connection when the requests join its transaction, else on the
        pool — in a transaction of its own when a dedupe rule may move a run's key aside,
        so the key moves only with the run that takes it."""
        if not requests:
            return []
        connection = shared_connection(requests)
        if connection is not None:
            session = await joined_session(
                connection, self._db, what=f'enqueue of job "{requests[0].name}"'
            )
            return await self._enqueue_on(session, requests)
        pool = await self._db.pool()
        if all(r.dedupe.retained for r in requests):
            return await self._enqueue_on(pool, requests)
        async with pool.acquire() as borrowed, borrowed.transaction():
            return await self._enqueue_on(borrowed, requests)

    async def _enqueue_on(
        self, session: _Fetches, requests: Sequence[EnqueueRequest]
    ) -> list[EnqueueResult]:
        queries = self._db.queries
        batch = EnqueueBatch(requests)
        while pending := batch.pending():
            now = self._clock.now_ms()
            if ruled := batch.superseding():
                await session.fetch(
                    queries["enqueue_supersede"],
                    [r.idempotency_key for r in ruled],
                    [r.dedupe.active_only for r in ruled],
                    [r.dedupe.window_ms for r in ruled],
                    now,
                    SUPERSEDED_KEY_BYTES,
                )
            columns = array_columns(tuple(stored_columns(r).values()) for r in pending)
            written = await session.fetch(queries["enqueue"], *columns, now)
            if taken := batch.written(written):
                batch.existing(await session.fetch(queries["enqueue_existing"], taken))
        return batch.results()

    async def claim(self, options: ClaimOptions) -> list[ClaimedJob]:
        """One statement (``settle_and_claim`` with nothing to settle); with
        ``options.limits`` it also takes each keyed run's slot and skips runs whose key is
        full."""
        return (await self.settle_and_claim([], options))[1]

    async def settle_many(self, settles: Sequence[Settle]) -> list[bool]:
        """One statement (``settle_and_claim`` claiming nothing)."""
        return (await self._round_trip(settles, None))[0]

    async def settle_and_claim(
        self, settles: Sequence[Settle], options: ClaimOptions
    ) -> tuple[list[bool], list[ClaimedJob]]:
        """One statement: the settles, then the claim (``sql/queries/settle_and_claim.sql``;
        with ``options.limits``, ``settle_and_keyed_claim.sql``, which counts the slots the
        settles release as free and hands them to the runs it claims)."""
        return await self._round_trip(settles, options)

    async def _round_trip(
        self, settles: Sequence[Settle], options: ClaimOptions | None
    ) -> tuple[list[bool], list[ClaimedJob]]:
        pool = await self._db.pool()
        pks = [run_pk(job_id) for job_id, _ in settles]
        firsts = first_of_each([job_id for job_id, _ in settles])
        sent = [
            (pk, settle)
            for pk, (_, settle), first in zip(pks, settles, firsts, strict=True)
            if pk is not None and first
        ]
        now = self._clock.now_ms()
        claiming = options is not None and options.limit > 0
        if not sent and not claiming:
            return [False] * len(settles), []
        if claiming:
            # Lapsed leases and runs promoted from later become ready before the claim
            # reads the set (at most one statement, and only when the fleet's turn is due).
            await self._ready.tend(pool, now)
        batch = json_text([_settle_row(pk, settle, now) for pk, settle in sent])
        landed, claimed, stale = await self._settle_and_claim(pool, batch, now, options)
        # A claim that dropped stale ready rows came back short without the queue being
        # empty: claim the rest at once rather than let the worker idle until its poll.
        for _ in range(_STALE_REFILLS):
            if options is None or not stale or len(claimed) >= options.limit:
                break
            rest = replace(options, limit=options.limit - len(claimed))
            _, more, stale = await self._settle_and_claim(pool, "[]", now, rest)
            claimed += more
        return (
            [
                pk is not None and pk in landed and first
                for pk, first in zip(pks, firsts, strict=True)
            ],
            claimed,
        )

    async def _settle_and_claim(
        self, pool: Pool, batch: str, now: int, options: ClaimOptions | None
    ) -> tuple[set[int], list[ClaimedJob], int]:
        """One ``settle_and_claim`` (or keyed) statement: the settles that landed, the runs
        claimed, and how many stale ready rows the claim dropped."""
        limits = options.limits if options is not None else {}
        rates = options.rates if options is not None else {}
        extra: tuple[Any, ...]
        statement, extra = "settle_and_claim", ()
        if rates:
            statement = "settle_and_rated_claim"
            extra = (json_text([[name, *rate] for name, rate in rates.items()]),)
        elif limits:
            statement, extra = "settle_and_keyed_claim", (list(limits), list(limits.values()))
        rows = await pool.fetch(
            self._db.queries[statement],
            batch,
            now,
            CANCELLED_BY_OPERATOR.code,
            CANCELLED_BY_OPERATOR.message,
            options.worker_id if options is not None else None,
            max(options.limit, 0) if options is not None else 0,
            now + options.lease_ms if options is not None else None,
            list(options.queues) if options is not None and options.queues is not None else None,
            list(options.names) if options is not None and options.names is not None else None,
            *extra,
        )
        *claimed_rows, last = rows
        lease_expires_at_ms = now + options.lease_ms if options is not None else 0
        claimed = [
            run_of(ClaimedJob, row, lease_expires_at_ms=lease_expires_at_ms) for row in claimed_rows
        ]
        return set(last["landed"]), claimed, last["stale"]

    async def heartbeat_many(
        self, renewals: Sequence[Renewal], *, record: RecordWrite | None = None
    ) -> list[RenewalAnswer]:
        pool = await self._db.pool()
        pks = [run_pk(job_id) for job_id, _ in renewals]
        now = self._clock.now_ms()
        sent = [
            (pk, options) for pk, (_, options) in zip(pks, renewals, strict=True) if pk is not None
        ]
        renewed: dict[int, bool] = {}
        if sent or record is not None:
            columns = array_columns(
                (pk, o.worker_id, now + o.lease_ms, *progress_columns(o.progress)) for pk, o in sent
            ) or [[], [], [], [], []]
            rows = await pool.fetch(
                self._db.queries["heartbeat"],
                *columns,
                now,
                *(
                    (record.space, record.key, json_text(record.value), record.expires_at_ms)
                    if record is not None
                    else (None, None, None, None)
                ),
            )
            renewed = {row["id"]: row["cancel_requested"] for row in rows}
        return [
            RenewalAnswer(True, renewed[pk])
            if pk is not None and pk in renewed
            else RenewalAnswer(False)
            for pk in pks
        ]

    async def close(self) -> None:
        await self._listener.close()
        await self._db.close()


def _settle_row(pk: int, settle: AckOptions | NackOptions, now: int) -> tuple[Any, ...]:
    """One settle of run ``pk`` as an element of the ``_settle.sql`` batch, in order: the
    decisions of ``ferry.drivers.settle`` and the values the run keeps."""
    return (pk, *settle_columns(settle, now).values())


def postgres_job_driver(
    dsn_or_pool: str | Pool,
    *,
    schema: str = "ferry",
    clock: Clock | None = None,
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
        pool_max_size=pool_max_size,
        max_payload_bytes=max_payload_bytes,
    )
