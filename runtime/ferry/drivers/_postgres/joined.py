"""The application's connection, when an enqueue or an outbox append joins its transaction.

One job: turn whatever the application holds into something that runs one of the
driver's named statements with its parameters *on that connection*, so the run or the
entry commits with the application's transaction and never without it, ``pg_notify``
included. Accepted, and nothing else:

========================================  =============================  ==========
the application holds                      the statement runs through     blocking
========================================  =============================  ==========
asyncpg ``Connection`` (or pool proxy)     itself                         no
psycopg 3 ``AsyncConnection``              an ``AsyncRawCursor``          no
psycopg 3 ``Connection``                   a ``RawCursor``                yes
SQLAlchemy ``AsyncSession``/``AsyncConnection`` ``exec_driver_sql``      no
SQLAlchemy ``Session``/``Connection``      ``exec_driver_sql``            yes
Django connection (``django.db.connection``) its cursor                   yes
========================================  =============================  ==========

SQLAlchemy gets the statement through its own connection, not the DBAPI one beneath it:
its asyncpg adapter begins the database transaction lazily, at its own first statement,
so a statement sent past it could commit on its own. A *blocking* connection does its I/O
on the caller's thread; ``ferry._bridge`` runs the driver's code for it there, on a loop
of that thread's own, and nothing of the driver's pool is touched — a blocking caller may
have no event loop at all. So for those the schema is checked through the caller's
connection (``X_MIGRATIONS_PENDING`` rather than migrating inside their transaction).

The client libraries are looked up in ``sys.modules``: an object cannot be a psycopg
connection unless psycopg is imported, so ferry imports none of them itself.
"""

from __future__ import annotations

import re
import sys
import weakref
from collections.abc import Sequence
from typing import Any, Protocol

from ferry._bridge import blocking_allowed
from ferry.drivers._ledger import LedgerRow, judge
from ferry.drivers._postgres.database import Database
from ferry.drivers._postgres.ledger import known_migrations, place_of
from ferry.errors import FerryError

ACCEPTED = (
    "an asyncpg Connection, a psycopg 3 Connection or AsyncConnection, a SQLAlchemy "
    "Session, Connection, AsyncSession or AsyncConnection on PostgreSQL, or a Django "
    "PostgreSQL connection"
)
"""What ``connection=`` takes on the Postgres driver, as every refusal names it."""


class Row(Protocol):
    """A row by column name: an asyncpg ``Record`` or a dict."""

    def __getitem__(self, column: str, /) -> Any: ...


class JoinedSession(Protocol):
    """A caller's connection, able to run one of the driver's statements."""

    kind: str
    """What the caller passed, as refusals name it ("a psycopg Connection")."""

    blocking: bool

    def in_transaction(self) -> bool:
        """Whether a transaction is open on it now (one a write would commit with)."""
        ...

    async def fetch(self, query: str, *args: object) -> Sequence[Row]:
        """Run ``query`` (``$n`` placeholders) with ``args``; answers its rows."""
        ...


_checked: weakref.WeakSet[Database] = weakref.WeakSet()
"""Databases whose schema a blocking caller's connection has found migrated."""


async def joined_session(
    connection: Any, database: Database, *, what: str, transaction: bool = False
) -> JoinedSession:
    """``connection`` as a session that runs the driver's statements in its transaction;
    refused (``X_DRIVER_NO_TRANSACTIONS``, ``X_CONNECTION_CLOSED``,
    ``X_SYNC_ON_EVENT_LOOP``) when it cannot be joined. ``transaction``: a transaction must
    already be open on it (``X_INVARIANT`` otherwise) — the outbox's rule."""
    session = _adapt(connection, what=what)
    if session.blocking and not blocking_allowed():
        raise FerryError(
            "X_SYNC_ON_EVENT_LOOP",
            f"{what} was given {session.kind}, whose blocking I/O would stall the event loop "
            "it was awaited on",
            "call the sync entry point from sync code (job.enqueue_sync(...), "
            "driver.outbox.append_sync(...)), or pass an async connection here",
        )
    if transaction and not session.in_transaction():
        # Outside a transaction the write commits on its own, whatever becomes of the
        # business write it goes with: exactly the gap the outbox exists to close.
        raise FerryError(
            "X_INVARIANT",
            f"{what} ran outside a transaction on {session.kind}",
            "append inside the transaction of the business write (asyncpg/psycopg: "
            "`conn.transaction()`; SQLAlchemy: `session.begin()`; Django: "
            "`transaction.atomic()`)",
        )
    if session.blocking:
        await _check_migrated(session, database)
    else:
        await database.open()
    return session


def _adapt(connection: Any, *, what: str) -> JoinedSession:
    asyncpg = sys.modules.get("asyncpg")
    if asyncpg is not None and isinstance(connection, asyncpg.Connection):
        if connection.is_closed():
            raise _closed(what, "an asyncpg Connection")
        return _Asyncpg(connection)
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None:
        if isinstance(connection, psycopg.AsyncConnection):
            _refuse_closed(connection.closed, what, "a psycopg AsyncConnection")
            return _PsycopgAsync(connection)
        if isinstance(connection, psycopg.Connection):
            _refuse_closed(connection.closed, what, "a psycopg Connection")
            return _PsycopgSync(connection)
    if "sqlalchemy" in sys.modules:
        adapted = _sqlalchemy(connection, what=what)
        if adapted is not None:
            return adapted
    if "django" in sys.modules:
        adapted = _django(connection, what=what)
        if adapted is not None:
            return adapted
    raise FerryError(
        "X_DRIVER_NO_TRANSACTIONS",
        f"{what} was given {_named(connection)}, which the postgres driver cannot join",
        f"pass the connection whose transaction it must join: {ACCEPTED}",
    )


def _named(value: object) -> str:
    if value is None:
        return "None"
    kind = type(value)
    return f"a {kind.__module__}.{kind.__qualname__}"


def _closed(what: str, kind: str) -> FerryError:
    return FerryError(
        "X_CONNECTION_CLOSED",
        f"{what} was given {kind} that is closed",
        "pass the open connection (or session) your transaction runs on",
    )


def _refuse_closed(closed: bool, what: str, kind: str) -> None:
    if closed:
        raise _closed(what, kind)


def _not_postgres(what: str, kind: str, dialect: str) -> FerryError:
    return FerryError(
        "X_DRIVER_NO_TRANSACTIONS",
        f"{what} was given {kind} on {dialect}, not on PostgreSQL, where the postgres "
        "driver's tables are",
        f"pass a connection to the driver's database: {ACCEPTED}",
    )


async def _check_migrated(session: JoinedSession, database: Database) -> None:
    """Refuse a schema that lacks ferry's migrations, read through the caller's own
    connection (once per driver): its open transaction is no place to migrate."""
    if database in _checked:
        return
    queries = database.queries
    [present] = await session.fetch(queries["migrations_present"])
    rows: list[LedgerRow] = []
    if present["present"]:
        records = await session.fetch(queries["migrations_applied"])
        rows = [LedgerRow(r["version"], r["name"], r["checksum"]) for r in records]
    state = judge(rows, known_migrations(), place_of(queries.schema))
    if state.problem is not None:
        raise state.problem
    if state.pending:
        raise FerryError(
            "X_MIGRATIONS_PENDING",
            f'schema "{queries.schema}" lacks migration(s) '
            f"{', '.join(m.label for m in state.pending)}, and {session.kind} is no place "
            "to apply them (its transaction is the application's)",
            "run `ferry migrate` (Django: `manage.py ferry migrate`) once, or open the "
            "driver at start-up (`await driver.open()`)",
        )
    _checked.add(database)


class _Asyncpg:
    blocking = False
    kind = "an asyncpg Connection"

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def in_transaction(self) -> bool:
        return bool(self._connection.is_in_transaction())

    async def fetch(self, query: str, *args: object) -> Sequence[Row]:
        rows: Sequence[Row] = await self._connection.fetch(query, *args)
        return rows


def _psycopg_in_transaction(connection: Any) -> bool:
    from psycopg.pq import TransactionStatus

    return bool(connection.info.transaction_status != TransactionStatus.IDLE)


class _PsycopgAsync:
    blocking = False
    kind = "a psycopg AsyncConnection"

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def in_transaction(self) -> bool:
        return _psycopg_in_transaction(self._connection)

    async def fetch(self, query: str, *args: object) -> Sequence[Row]:
        from psycopg import AsyncRawCursor
        from psycopg.rows import dict_row

        # A raw cursor takes the statement's own $n placeholders as they are.
        async with AsyncRawCursor(self._connection, row_factory=dict_row) as cursor:
            await cursor.execute(query, args)
            return await cursor.fetchall()


class _PsycopgSync:
    blocking = True
    kind = "a psycopg Connection"

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def in_transaction(self) -> bool:
        return _psycopg_in_transaction(self._connection)

    async def fetch(self, query: str, *args: object) -> Sequence[Row]:
        from psycopg import RawCursor
        from psycopg.rows import dict_row

        with RawCursor(self._connection, row_factory=dict_row) as cursor:
            cursor.execute(query, args)
            return cursor.fetchall()


def _sqlalchemy(connection: Any, *, what: str) -> JoinedSession | None:
    from sqlalchemy.engine import Connection
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
    from sqlalchemy.orm import Session

    if isinstance(connection, AsyncSession | AsyncConnection):
        kind = f"a SQLAlchemy {type(connection).__name__}"
        if isinstance(connection, AsyncConnection):
            _refuse_closed(connection.closed, what, kind)
        return _SqlAlchemyAsync(connection, kind, what)
    if isinstance(connection, Session | Connection):
        kind = f"a SQLAlchemy {type(connection).__name__}"
        if isinstance(connection, Connection):
            _refuse_closed(connection.closed, what, kind)
        return _SqlAlchemySync(connection, kind, what)
    return None


class _SqlAlchemy:
    """What the async and the sync SQLAlchemy adapters share: the transaction state, the
    closed-session refusal, the dialect check and the placeholder style."""

    def __init__(self, connection: Any, kind: str, what: str) -> None:
        self._connection = connection
        self.kind = kind
        self._what = what

    def in_transaction(self) -> bool:
        return bool(self._connection.in_transaction())

    def _closed_for_good(self, refused: Exception) -> FerryError:
        return _closed(self._what, self.kind)

    def _prepared(self, connection: Any, query: str, args: Sequence[object]) -> tuple[str, Any]:
        """The statement and parameters in the dialect's own placeholder style, once the
        connection is known to be PostgreSQL."""
        dialect = connection.dialect
        if dialect.name != "postgresql":
            raise _not_postgres(self._what, self.kind, dialect.name)
        if dialect.paramstyle == "numeric_dollar":  # asyncpg's $n, as the statement has them
            return query, tuple(args)
        statement, ordered = positional(query, args)
        return statement, tuple(ordered)


class _SqlAlchemyAsync(_SqlAlchemy):
    blocking = False

    async def fetch(self, query: str, *args: object) -> Sequence[Row]:
        from sqlalchemy.exc import InvalidRequestError
        from sqlalchemy.ext.asyncio import AsyncSession

        try:
            # A session joins (or, autobegun, opens) its transaction; the commit is the app's.
            connection = (
                await self._connection.connection()
                if isinstance(self._connection, AsyncSession)
                else self._connection
            )
        except InvalidRequestError as refused:  # a session closed for good
            raise self._closed_for_good(refused) from refused
        statement, parameters = self._prepared(connection, query, args)
        result = await connection.exec_driver_sql(statement, parameters)
        return list(result.mappings().all())


class _SqlAlchemySync(_SqlAlchemy):
    blocking = True

    async def fetch(self, query: str, *args: object) -> Sequence[Row]:
        from sqlalchemy.exc import InvalidRequestError
        from sqlalchemy.orm import Session

        try:
            connection = (
                self._connection.connection()
                if isinstance(self._connection, Session)
                else self._connection
            )
        except InvalidRequestError as refused:
            raise self._closed_for_good(refused) from refused
        statement, parameters = self._prepared(connection, query, args)
        return list(connection.exec_driver_sql(statement, parameters).mappings().all())


def _django(connection: Any, *, what: str) -> JoinedSession | None:
    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.utils.connection import ConnectionProxy

    if isinstance(connection, ConnectionProxy):  # `django.db.connection`
        connection = connection._connections[connection._alias]
    if not isinstance(connection, BaseDatabaseWrapper):
        return None
    kind = f'the Django connection "{connection.alias}"'
    if connection.vendor != "postgresql":
        raise _not_postgres(what, kind, connection.vendor)
    return _Django(connection, kind)


class _Django:
    blocking = True

    def __init__(self, connection: Any, kind: str) -> None:
        self._connection = connection
        self.kind = kind

    def in_transaction(self) -> bool:
        return bool(self._connection.in_atomic_block)

    async def fetch(self, query: str, *args: object) -> Sequence[Row]:
        statement, parameters = positional(query, args)
        with self._connection.cursor() as cursor:
            cursor.execute(statement, parameters)
            names = [column[0] for column in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|\$(\d+)|%", re.S)


def positional(query: str, args: Sequence[object]) -> tuple[str, list[object]]:
    """``query`` with its ``$n`` placeholders as DB-API ``%s`` ones (a literal ``%``
    doubled), and the parameters in the order the placeholders now appear — a ``$n``
    used twice takes its value twice. Literals, quoted names and comments are left alone."""
    ordered: list[object] = []

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if match.group(1) is not None:
            ordered.append(args[int(match.group(1)) - 1])
            return "%s"
        if token.startswith(("--", "/*")):
            return ""
        return token.replace("%", "%%")  # a literal's own % too: DB-API reads those

    return _TOKENS.sub(replace, query), ordered
