"""The driver's way into PostgreSQL: one pool, migrated on first use, and one LISTEN session.

Every store of a driver (runs, steps, slots, scheduler, outbox, ledgers) runs on this one
pool. Given a DSN, the driver creates the pool and closes it; given a pool, it borrows it
and never closes it. Nothing connects until the first call, so building a driver at import
time (``set_job_driver(postgres_job_driver(dsn))``) costs nothing. Every connection the
driver opens goes host by host with its own timeout, its statements bounded
(``connect.py``: how the pool and the LISTEN session follow a primary that moved).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeAlias

import asyncpg
from asyncpg.pool import PoolAcquireContext, PoolConnectionProxy

from ferry._bridge import serve
from ferry._clock import Clock
from ferry.drivers._ledger import LedgerState, Migration
from ferry.drivers._postgres.connect import ConnectOptions
from ferry.drivers._postgres.ledger import read_ledger
from ferry.drivers._postgres.migrate import apply_migrations
from ferry.drivers._postgres.queries import Queries
from ferry.drivers._postgres.reach import connection_refusals
from ferry.errors import FerryError

# Strings: asyncpg's classes are generic only in its stubs, not at run time.
Pool: TypeAlias = "asyncpg.Pool[asyncpg.Record]"
ListenConnection: TypeAlias = (
    "asyncpg.Connection[asyncpg.Record] | PoolConnectionProxy[asyncpg.Record]"
)


logger = logging.getLogger("ferry.drivers.postgres")

ANALYZE_BACKLOG_RUNS = 1_000
"""A never-analyzed jobs table holding this many runs is analyzed when a driver opens
(``sql/queries/jobs_never_analyzed.sql`` says why); autovacuum takes over from there."""


def wake_application_name(schema: str) -> str:
    """``application_name`` of the LISTEN session a driver opens itself (``pg_stat_activity``)."""
    return f"ferry-wake:{schema}"


class Database:
    """A pool on one schema, migrated before the first statement runs on it."""

    def __init__(
        self, target: str | Pool, *, schema: str, clock: Clock, pool_max_size: int
    ) -> None:
        self.queries = Queries(schema)
        self.clock = clock
        self._target = target
        self._dsn = target if isinstance(target, str) else None
        self._connects = ConnectOptions.of(target) if isinstance(target, str) else None
        self._host: int | None = None
        """Which host of the URL the pool's newest connection went to."""
        self._pool_max_size = pool_max_size
        self._pool: Pool | None = None
        self._migrated = False
        self._closed = False
        self._connecting = asyncio.Lock()
        self._opening = asyncio.Lock()

    async def pool(self) -> Pool:
        """The pool, opened and migrated if this is the first use."""
        if not self._migrated:
            await self.open()
        self.check_open()
        assert self._pool is not None
        return self._pool

    async def open(self) -> None:
        """Connect and apply pending migrations, once; later calls return at once."""
        async with self._opening:
            if not self._migrated:
                await self.migrate()

    async def migrate(self) -> list[Migration]:
        """Apply pending migrations now; answers the migrations this call applied.

        An unreachable database or a malformed URL is ``X_DB_UNREACHABLE`` or
        ``X_DB_URL_INVALID``; a schema newer than this ferry or a drifted ledger is refused
        (``X_SCHEMA_NEWER``, ``X_SCHEMA_DRIFT``) before anything runs on it.
        """
        with connection_refusals(self._dsn):
            await self._connected()
            async with self._unbounded() as connection:
                applied = await apply_migrations(connection, self.queries, self.clock)
                if await connection.fetchval(
                    self.queries["jobs_never_analyzed"], ANALYZE_BACKLOG_RUNS
                ):
                    await connection.execute(self.queries["jobs_analyze"])
        self._migrated = True
        return applied

    @asynccontextmanager
    async def _unbounded(self) -> AsyncIterator[ListenConnection]:
        """A connection whose statements may run as long as they need (a migration on a
        big table): a dedicated one for a DSN, one of a borrowed pool (its settings)."""
        if self._connects is None:
            assert self._pool is not None
            async with self._pool.acquire() as borrowed:
                yield borrowed
            return
        connection = await self._connects.connect(bounded=False)
        try:
            yield connection
        finally:
            await connection.close()

    async def inspect(self) -> tuple[str, LedgerState]:
        """The server's version and the judged ledger, on a connection of its own (or one
        borrowed from a given pool), applying nothing: what ``ferry doctor`` reports."""
        self.check_open()
        with connection_refusals(self._dsn):
            if self._connects is None:
                assert not isinstance(self._target, str)
                async with self._target.acquire() as borrowed:
                    return await self._inspect(borrowed)
            connection = await self._connects.connect()
            try:
                return await self._inspect(connection)
            finally:
                await connection.close()

    async def _inspect(self, connection: ListenConnection) -> tuple[str, LedgerState]:
        version = await connection.fetchval("SHOW server_version")
        return f"PostgreSQL {version}", await read_ledger(connection, self.queries)

    def listen_session(self) -> AbstractAsyncContextManager[ListenConnection]:
        """A connection to LISTEN on: a dedicated one for a DSN, a borrowed one for a pool."""
        if self._connects is not None:
            return _dedicated_connection(self._connects, self.queries.schema)
        assert not isinstance(self._target, str)
        return self._target.acquire()

    def check_open(self) -> None:
        """Refuse use after ``close``."""
        if self._closed:
            raise FerryError(
                "X_DRIVER_CLOSED",
                f'the postgres job driver on schema "{self.queries.schema}" was used after close()',
                "create a new driver, or close it only at shutdown",
            )

    async def close(self) -> None:
        """Close the pool if this driver created it; a borrowed pool stays open. A
        connection whose host went silent cannot be closed politely (the goodbye is never
        answered, past ``command_timeout``): then every socket is dropped instead."""
        self._closed = True
        if isinstance(self._target, str) and self._pool is not None:
            try:
                await self._pool.close()
            except Exception:
                self._pool.terminate()

    async def _connected(self) -> Pool:
        self.check_open()
        async with self._connecting:
            if self._pool is None:
                serve()  # the pool is this loop's: sync callers are sent here
            if self._pool is None and self._connects is None:
                assert not isinstance(self._target, str)
                self._pool = self._target
            elif self._pool is None and self._connects is not None:
                self._pool = await _FollowingPool(
                    self._connects.dsn,
                    connect=self._pool_connect,
                    min_size=1,
                    max_size=self._pool_max_size,
                    max_queries=ASYNCPG_MAX_QUERIES,
                    max_inactive_connection_lifetime=ASYNCPG_MAX_INACTIVE_S,
                    reset=_keep_session,
                    loop=None,
                    connection_class=_Connection,
                    record_class=asyncpg.Record,
                )
            assert self._pool is not None
        return self._pool

    async def _pool_connect(
        self, dsn: str | None = None, **kwargs: Any
    ) -> asyncpg.Connection[asyncpg.Record]:
        """A new connection for the pool (``Pool(connect=...)``), host by host; one that
        lands on another host of the URL than the last one did is logged: the primary
        moved (``jobs.database.moved``)."""
        assert self._connects is not None
        connection, host = await self._connects.connect_first(**kwargs)
        moved_from, self._host = self._host, host
        if moved_from is not None and moved_from != host:
            logger.warning(
                "jobs.database.moved",
                extra={
                    "schema": self.queries.schema,
                    "from": self._connects.names[moved_from],
                    "to": self._connects.names[host],
                },
            )
        return connection


ASYNCPG_MAX_QUERIES = 50_000
ASYNCPG_MAX_INACTIVE_S = 300.0
"""asyncpg's own defaults for a pool (``create_pool``), which ``_FollowingPool`` keeps."""

_LOST = (
    TimeoutError,  # unanswered past command_timeout
    OSError,
    asyncpg.ConnectionDoesNotExistError,
    asyncpg.PostgresConnectionError,
    asyncpg.OperatorInterventionError,  # shutting down, terminated by an administrator
)
"""What a statement raises when its connection, or the server behind it, is gone."""


if TYPE_CHECKING:
    _PoolBase: TypeAlias = asyncpg.Pool[asyncpg.Record]
    _AcquireBase: TypeAlias = PoolAcquireContext[asyncpg.Record]
    _ConnectionBase: TypeAlias = asyncpg.Connection[asyncpg.Record]
else:  # asyncpg's classes are generic only in its stubs, not at run time
    _PoolBase, _AcquireBase = asyncpg.Pool, PoolAcquireContext
    _ConnectionBase = asyncpg.Connection


class _FollowingPool(_PoolBase):
    """asyncpg's pool, which gives up on *every* connection it holds the moment one of them
    turns out lost.

    When a primary goes away, each of the pool's connections to it fails only when next
    used — asyncpg hands out a connection that looks alive before a fresh one — and to a
    host that went silent each failure costs a statement timeout: a worker would take one
    timeout per pooled connection to get back to work. One lost connection is evidence
    enough for all (a false alarm costs a reconnect), so all are expired: each is replaced,
    host by host, when it is next used. Every statement the driver runs goes through
    ``acquire`` (``pool.fetch`` included), so this is the one place that sees them fail."""

    def acquire(self, *, timeout: float | None = None) -> PoolAcquireContext[asyncpg.Record]:
        return _Acquired(self, timeout)


class _Connection(_ConnectionBase):
    """A pooled connection whose polite close never raises.

    The pool closes an expired connection in a task of its own that nobody awaits; to a
    host that went silent the goodbye is never answered, asyncpg drops the socket after
    ``command_timeout`` and raises — an error nobody could read. The socket is gone either
    way, which is all a close is for."""

    async def close(self, *, timeout: float | None = None) -> None:  # noqa: ASYNC109 (asyncpg)
        with contextlib.suppress(Exception):
            await super().close(timeout=timeout)


class _Acquired(_AcquireBase):
    """A connection taken from a ``_FollowingPool``; a lost one expires the rest."""

    async def __aexit__(self, *exc: object) -> None:
        try:
            await super().__aexit__(*exc)
        finally:
            if isinstance(exc[1] if len(exc) > 1 else None, _LOST):
                await self.pool.expire_connections()


async def _keep_session(connection: asyncpg.Connection[asyncpg.Record]) -> None:
    """Release a pooled connection without asyncpg's default reset query.

    The default (``RESET ALL; UNLISTEN *; ...``) is a second round trip on every
    statement; the driver never changes session state on its own pool's connections,
    so there is nothing to reset (asyncpg still rolls back an open transaction).
    """


@asynccontextmanager
async def _dedicated_connection(
    connects: ConnectOptions, schema: str
) -> AsyncIterator[ListenConnection]:
    connection = await connects.connect(
        server_settings={"application_name": wake_application_name(schema)}
    )
    try:
        yield connection
    finally:
        with contextlib.suppress(OSError, asyncpg.InterfaceError, asyncpg.PostgresError):
            await connection.close(timeout=5)
