"""``redis_job_driver()``: the durable ``JobDriver`` on Redis, one Lua script per operation.

Enqueue, claim, a batch of settles and a batch of renewals are each one script — atomic on
the server, one round trip whatever the batch size; instants come from the driver's clock
as arguments, never from the server's ``TIME``. One client serves every store and one
pub/sub session every wake-up. The stores beyond that path are the ones written once in
``ferry.drivers._stores``, each statement of theirs a script here (``statements.py``).
Read the scripts themselves in ``lua/``.

Durability is the server's: with ``appendonly yes`` and ``appendfsync always`` an
acknowledged write survives a crash of the server; with ``everysec`` up to a second of
writes can be lost (docs/drivers.md). There are no transactions with the application's
database: ``connection=`` is refused with ``X_DRIVER_NO_TRANSACTIONS``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from ferry._clock import Clock, SystemClock
from ferry._payload import DEFAULT_MAX_PAYLOAD_BYTES, payload_limit
from ferry.drivers._columns import progress_columns, run_of, settle_columns
from ferry.drivers._ledger import LedgerState, Migration
from ferry.drivers._redis.children import RedisChildren
from ferry.drivers._redis.codec import json_text, opt, request_args
from ferry.drivers._redis.connection import Connection
from ferry.drivers._redis.keyspace import Keyspace, run_id
from ferry.drivers._redis.migrate import apply_migrations, known_migrations, read_ledger
from ferry.drivers._redis.outbox import RedisOutbox
from ferry.drivers._redis.statements import RedisStatements
from ferry.drivers._redis.transfer import in_one_script
from ferry.drivers._redis.wake import PubSubListener
from ferry.drivers._refusals import refuse_joining
from ferry.drivers._stores.actions import ScriptedActions
from ferry.drivers._stores.introspect import StatementIntrospection
from ferry.drivers._stores.prune import prune
from ferry.drivers._stores.rates import StatementRateBuckets
from ferry.drivers._stores.records import StatementLeaseStore, StatementRecordStore
from ferry.drivers._stores.results import StatementResults
from ferry.drivers._stores.slots import StatementSlotStore
from ferry.drivers._stores.steps import StatementStepStore
from ferry.drivers._stores.transfer import StatementTransfer
from ferry.drivers._wake import (
    IDLE_POLL_MAX_MS,
    IDLE_POLL_MAX_WAKE_PROVEN_MS,
    ChannelWake,
    SettleWaiters,
)
from ferry.drivers.protocol import (
    SUPERSEDED_KEY_BYTES,
    AckOptions,
    ClaimedJob,
    ClaimOptions,
    EnqueueRequest,
    EnqueueResult,
    NackOptions,
    PruneReport,
    QueueStats,
    RecordWrite,
    Renewal,
    RenewalAnswer,
    RetentionPolicy,
    Settle,
)
from ferry.drivers.settle import CANCELLED_BY_OPERATOR, DerivedCalls, first_of_each


class RedisJobDriver(DerivedCalls):
    """Every stored thing of ferry under one Redis key prefix, over one client."""

    def __init__(
        self, target: str | Redis, *, prefix: str, clock: Clock, max_payload_bytes: int
    ) -> None:
        self._clock = clock
        self._max_payload_bytes = payload_limit(max_payload_bytes)
        self._keys = Keyspace(prefix)
        self._connection = Connection(target, keys=self._keys, clock=clock)
        self._listener = PubSubListener(
            self._connection.client,
            [self._keys.runs_channel, self._keys.outbox_channel],
            clock=clock,
        )
        self._statements = statements = RedisStatements(self._connection)
        self._steps = StatementStepStore(statements)
        # The capabilities it offers (``ferry.drivers.capabilities``): all of them.
        self.slots = StatementSlotStore(statements)
        self.rates = StatementRateBuckets(statements)
        self.leases = StatementLeaseStore(statements)
        self.records = StatementRecordStore(statements)
        self.introspect = StatementIntrospection(statements, ScriptedActions(statements))
        self.outbox = RedisOutbox(statements, lambda: self._channel(self._keys.outbox_channel))
        # Nothing to wake after a batch: the import script publishes the wake itself, and
        # released runs are found by the workers' next poll (as on Postgres).
        self.transfer = StatementTransfer(statements, lambda: None, in_one_script(statements))
        self._ended = SettleWaiters(
            self._listener,
            clock,
            idle_poll_ms=IDLE_POLL_MAX_WAKE_PROVEN_MS,
            unhealthy_poll_ms=IDLE_POLL_MAX_MS,
        )
        self.results = StatementResults(statements, self._news)
        self.children = RedisChildren(statements, self._connection)

    @property
    def name(self) -> str:
        return "redis"

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def prefix(self) -> str:
        """The key prefix holding this driver's keys (inside a ``{…}`` hash tag)."""
        return self._keys.prefix

    @property
    def max_payload_bytes(self) -> int:
        return self._max_payload_bytes

    @property
    def location(self) -> str:
        """``redis://host:6379/0?prefix=ferry``: the server, database and prefix, no password."""
        return self._connection.location

    @property
    def steps(self) -> StatementStepStore:
        return self._steps

    @property
    def where(self) -> str:
        """Where its keys are, as messages name it: ``redis prefix "ferry"``."""
        return f'redis prefix "{self.prefix}"'

    @property
    def migrations(self) -> tuple[Migration, ...]:
        """Every keyspace migration this ferry ships for Redis (``migrate``)."""
        return known_migrations()

    async def open(self) -> None:
        """Connect and check the server answers; every other method does this first."""
        await self._connection.open()

    async def migrate(self) -> list[int]:
        """Apply pending keyspace migrations now; answers the versions this call applied
        (opening applies them too, so after ``open`` there are none left)."""
        client = await self._connection.reached()  # not opened: opening would apply them
        return [m.version for m in await apply_migrations(client, self._keys, self._clock)]

    async def inspect(self) -> tuple[str, LedgerState]:
        """What ``ferry doctor`` reports: the server's version and the keyspace's judged
        ledger, read without applying anything."""
        client = await self._connection.reached()
        info = await client.info("server")
        return f"Redis {info['redis_version']}", await read_ledger(client, self._keys)

    async def database_now_ms(self) -> int:
        """The server's clock (``TIME``), for the skew check."""
        seconds, microseconds = await self._connection.command("TIME")
        return int(seconds) * 1_000 + int(microseconds) // 1_000

    def wake(self) -> ChannelWake:
        """This driver's one pub/sub session, on the runs channel; listening once called."""
        return self._channel(self._keys.runs_channel)

    def _channel(self, channel: str) -> ChannelWake:
        self._connection.check_open()
        return self._listener.wake(channel)

    def _news(self) -> SettleWaiters:
        """The waiters on runs ending, the pub/sub session following the ended channel
        from the first call (only processes that wait for results subscribe to it)."""
        self._connection.check_open()
        self._listener.follow(self._keys.ended_channel, self._ended)
        return self._ended

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        if not requests:
            return []
        refuse_joining(
            requests,
            "redis",
            "enqueue without connection= (the run is written at once), or append to the "
            "outbox of the application's SQL database (postgres_job_driver(...).outbox, "
            "sqlite_job_driver(...).outbox) in its transaction and let the relay enqueue here",
        )
        args: list[str | int] = [self._clock.now_ms(), SUPERSEDED_KEY_BYTES, len(requests)]
        for r in requests:
            args += [*request_args(r), int(r.dedupe.active_only), opt(r.dedupe.window_ms)]
        answers = await self._connection.run("enqueue", *args)
        return [
            EnqueueResult(str(job_id), bool(deduplicated))
            for job_id, deduplicated in zip(answers[::2], answers[1::2], strict=True)
        ]

    async def claim(self, options: ClaimOptions) -> list[ClaimedJob]:
        rows = await self._connection.run("claim", *self._claim_args(options))
        return [_claimed(row) for row in rows]

    async def settle_many(self, settles: Sequence[Settle]) -> list[bool]:
        sent, firsts = self._settles(settles)
        if not sent:
            return [False] * len(settles)
        landed = await self._connection.run("settle", *self._settle_args(sent))
        return _landed(settles, firsts, sent, landed)

    async def settle_and_claim(
        self, settles: Sequence[Settle], options: ClaimOptions
    ) -> tuple[list[bool], list[ClaimedJob]]:
        """One script: the settles land first, so a slot they release is claimable by the
        claim that follows in the same call."""
        sent, firsts = self._settles(settles)
        landed, rows = await self._connection.run(
            "settle_and_claim", *self._settle_args(sent), *self._claim_args(options)
        )
        return _landed(settles, firsts, sent, landed), [_claimed(row) for row in rows]

    async def heartbeat_many(
        self, renewals: Sequence[Renewal], *, record: RecordWrite | None = None
    ) -> list[RenewalAnswer]:
        known = [(run_id(job_id), options) for job_id, options in renewals]
        sent = [(job_id, options) for job_id, options in known if job_id is not None]
        answers: list[int] = []
        if sent or record is not None:
            now = self._clock.now_ms()
            args: list[str | int] = [now, len(sent)]
            for job_id, options in sent:
                args += [
                    job_id,
                    options.worker_id,
                    now + options.lease_ms,
                    *map(opt, progress_columns(options.progress)),
                ]
            args += (
                [opt(record.space), record.key, json_text(record.value), record.expires_at_ms]
                if record is not None
                else ["", "", "", ""]
            )
            answers = list(await self._connection.run("heartbeat", *args))
        replies = iter(answers)
        return [
            _renewal(next(replies)) if job_id is not None else RenewalAnswer(False)
            for job_id, _ in known
        ]

    async def stats(self) -> list[QueueStats]:
        return await self.introspect.stats()

    async def prune(self, policy: RetentionPolicy) -> PruneReport:
        return await prune(self._statements, policy)

    async def close(self) -> None:
        await self._listener.close()
        await self._connection.close()

    def _claim_args(self, options: ClaimOptions) -> list[str | int]:
        now = self._clock.now_ms()
        args: list[str | int] = [options.worker_id, now, now + options.lease_ms, options.limit]
        for chosen in (options.queues, options.names):
            args += [-1] if chosen is None else [len(chosen), *chosen]
        args.append(len(options.limits))
        for name, limit in options.limits.items():
            args += [name, limit]
        args.append(len(options.rates))
        for name, (limit, per_ms) in options.rates.items():
            args += [name, limit, per_ms]
        return args

    def _settles(self, settles: Sequence[Settle]) -> tuple[list[Settle], list[bool]]:
        """The settles worth sending: the first of each run, for ids a run can have."""
        firsts = first_of_each([job_id for job_id, _ in settles])
        sent = [
            (job_id, settle)
            for (job_id, settle), first in zip(settles, firsts, strict=True)
            if first and run_id(job_id) is not None
        ]
        return sent, firsts

    def _settle_args(self, sent: Sequence[Settle]) -> list[str | int]:
        now = self._clock.now_ms()
        args: list[str | int] = [
            now,
            CANCELLED_BY_OPERATOR.code,
            CANCELLED_BY_OPERATOR.message,
            len(sent),
        ]
        for job_id, settle in sent:
            args += [job_id, *_settle_row(settle, now)]
        return args


def _settle_row(settle: AckOptions | NackOptions, now: int) -> list[str]:
    """One settle as the ``settle`` script's arguments after the run id, each an opt (a
    flag as 1 or 0)."""
    columns = settle_columns(settle, now)
    if isinstance(settle, AckOptions):  # stored as JSON text (a null result too)
        columns["result"] = json_text(settle.result)
    return [opt(int(v)) if isinstance(v, bool) else opt(v) for v in columns.values()]


def _landed(
    settles: Sequence[Settle], firsts: list[bool], sent: list[Settle], landed: list[int]
) -> list[bool]:
    """Each settle's answer in request order: a repeat or an unknown id landed nowhere."""
    by_run = {job_id: bool(flag) for (job_id, _), flag in zip(sent, landed, strict=True)}
    return [
        first and by_run.get(job_id, False)
        for (job_id, _), first in zip(settles, firsts, strict=True)
    ]


def _renewal(answer: int) -> RenewalAnswer:
    """The ``heartbeat`` script's answer: 0 not renewed, 1 renewed, 2 renewed and cancelled."""
    return RenewalAnswer(landed=answer > 0, cancel_requested=answer == 2)


_CLAIMED = (
    "name", "queue", "payload", "idempotency_key", "attempts", "max_attempts", "tenant",
    "actor", "concurrency_key", "run_at_ms", "created_at_ms", "lease_expires_at_ms",
    "traceparent",
)  # fmt: skip
"""The columns a claim answers after the run's id, in order (then whether its slot is held,
and the instant a run its rate limit deferred is due at: false for a leased one). The reply
is positional — it is the hot path — so the names are given here, where a statement's rows
are named in ``lua/lib.lua``'s ``run_columns``."""
_CLAIMED_INTEGERS = frozenset(
    {"attempts", "max_attempts", "run_at_ms", "created_at_ms", "lease_expires_at_ms"}
)


def _claimed(row: list[Any]) -> ClaimedJob:
    job_id, *values, slot_held, rate_deferred = row
    columns = {
        name: int(value) if name in _CLAIMED_INTEGERS and value is not None else value
        for name, value in zip(_CLAIMED, values, strict=True)
    }
    columns["id"] = str(job_id)
    return run_of(
        ClaimedJob,
        columns,
        slot_held=bool(slot_held),
        rate_deferred_until_ms=int(rate_deferred) if rate_deferred else None,
    )


def redis_job_driver(
    url_or_client: str | Redis,
    *,
    prefix: str = "ferry",
    clock: Clock | None = None,
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
) -> RedisJobDriver:
    """A driver on Redis (6.2 or newer); it connects on first use, not here.

    Given a URL (``redis://[:password@]host:6379/0``, ``rediss://`` for TLS,
    ``unix:///path``), it creates (and on ``close`` closes) its client; given a
    ``redis.asyncio.Redis`` built with ``decode_responses=True``, it borrows it and never
    closes it. Every key lives under ``{prefix}``, so several deployments share one server
    by prefix. ``max_payload_bytes`` limits one enqueued payload's JSON text (default 1 MiB).
    """
    return RedisJobDriver(
        url_or_client,
        prefix=prefix,
        clock=clock or SystemClock(),
        max_payload_bytes=max_payload_bytes,
    )
