"""The driver's way into PostgreSQL: one pool, migrated on first use, and one LISTEN session.

Every store of a driver (runs, steps, slots, scheduler, outbox, ledgers) runs on this one
pool. Given a DSN, the driver creates the pool and closes it; given a pool, it borrows it
and never closes it. Nothing connects until the first call, so building a driver at import
time (``set_job_driver(postgres_job_driver(dsn))``) costs nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from ferry._bridge import serve
from ferry._clock import Clock
from ferry.drivers._ledger import LedgerState, Migration
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
            pool = await self._connected()
            async with pool.acquire() as connection:
                applied = await apply_migrations(connection, self.queries, self.clock)
                if await connection.fetchval(
                    self.queries["jobs_never_analyzed"], ANALYZE_BACKLOG_RUNS
                ):
                    await connection.execute(self.queries["jobs_analyze"])
        self._migrated = True
        return applied

    async def inspect(self) -> tuple[str, LedgerState]:
        """The server's version and the judged ledger, on a connection of its own (or one
        borrowed from a given pool), applying nothing: what ``ferry doctor`` reports."""
        self.check_open()
        with connection_refusals(self._dsn):
            if not isinstance(self._target, str):
                async with self._target.acquire() as borrowed:
                    return await self._inspect(borrowed)
            connection = await asyncpg.connect(self._target, timeout=10)
            try:
                return await self._inspect(connection)
            finally:
                await connection.close()

    async def _inspect(self, connection: ListenConnection) -> tuple[str, LedgerState]:
        version = await connection.fetchval("SHOW server_version")
        return f"PostgreSQL {version}", await read_ledger(connection, self.queries)

    def listen_session(self) -> AbstractAsyncContextManager[ListenConnection]:
        """A connection to LISTEN on: a dedicated one for a DSN, a borrowed one for a pool."""
        if isinstance(self._target, str):
            return _dedicated_connection(self._target, self.queries.schema)
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
        """Close the pool if this driver created it; a borrowed pool stays open."""
        self._closed = True
        if isinstance(self._target, str) and self._pool is not None:
            await self._pool.close()

    async def _connected(self) -> Pool:
        self.check_open()
        async with self._connecting:
            if self._pool is None:
                serve()  # the pool is this loop's: sync callers are sent here
                self._pool = (
                    await asyncpg.create_pool(
                        self._target,
                        min_size=1,
                        max_size=self._pool_max_size,
                        reset=_keep_session,
                    )
                    if isinstance(self._target, str)
                    else self._target
                )
        return self._pool


async def _keep_session(connection: asyncpg.Connection[asyncpg.Record]) -> None:
    """Release a pooled connection without asyncpg's default reset query.

    The default (``RESET ALL; UNLISTEN *; ...``) is a second round trip on every
    statement; the driver never changes session state on its own pool's connections,
    so there is nothing to reset (asyncpg still rolls back an open transaction).
    """


@asynccontextmanager
async def _dedicated_connection(dsn: str, schema: str) -> AsyncIterator[ListenConnection]:
    connection = await asyncpg.connect(
        dsn, server_settings={"application_name": wake_application_name(schema)}
    )
    try:
        yield connection
    finally:
        with contextlib.suppress(OSError, asyncpg.InterfaceError, asyncpg.PostgresError):
            await connection.close(timeout=5)
