"""A database that cannot be reached, or a URL that names none, as a refusal — never a
traceback, never the password.

asyncpg reports these as a dozen unrelated exceptions (``ConnectionRefusedError``,
``socket.gaierror``, ``InvalidPasswordError``, ``ValueError`` from its URL parser, …). The
driver's open and the CLI's error boundary both turn them into ``X_DB_UNREACHABLE`` or
``X_DB_URL_INVALID`` here, so every command and role words them the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg

from ferry.drivers._urls import redacted, scrubbed
from ferry.errors import FerryError

#: Failures that mean "no usable connection to that server", whatever their class.
_UNREACHABLE = (
    OSError,  # refused, reset, DNS (gaierror), TLS (ssl.SSLError)
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.InvalidAuthorizationSpecificationError,  # no such user, wrong password
    asyncpg.InvalidCatalogNameError,  # no such database
    asyncpg.OperatorInterventionError,  # starting up, shutting down
    asyncpg.InsufficientResourcesError,  # too many connections
)
_URL_FIX = (
    "write it as postgresql://user:password@host:5432/database (percent-encode special "
    "characters of the password), in DATABASE_URL or --database-url"
)


def refusal_for(error: BaseException, dsn: str | None) -> FerryError | None:
    """The refusal ``error`` stands for when connecting to ``dsn``, or None when it is not
    a connection failure (a bug stays a traceback)."""
    if isinstance(error, ValueError) and not isinstance(error, asyncpg.PostgresError):
        return FerryError(
            "X_DB_URL_INVALID",
            f"the database URL cannot be read: {_url_problem(error, dsn)}",
            _URL_FIX,
        )
    if isinstance(error, asyncpg.InterfaceError) and error.__context__ is not None:
        # A connection lost inside `async with connection.transaction()` surfaces as the
        # rollback's complaint that the connection is closed; what closed it is the context.
        return refusal_for(error.__context__, dsn)
    if not isinstance(error, _UNREACHABLE):
        return None
    where = f" at {redacted(dsn)}" if dsn else ""
    return FerryError(
        "X_DB_UNREACHABLE",
        f"cannot connect to the database{where}: "
        f"{type(error).__name__}: {scrubbed(str(error), dsn)}",
        "check DATABASE_URL (or --database-url): the host and port, that the server is up and "
        "reachable from here, and the user, password and database name",
    )


@contextmanager
def connection_refusals(dsn: str | None) -> Iterator[None]:
    """Raise the refusal of any connection failure inside the block instead of it."""
    try:
        yield
    except FerryError:
        raise
    except Exception as error:
        refusal = refusal_for(error, dsn)
        if refusal is None:
            raise
        raise refusal from None


def _url_problem(error: ValueError, dsn: str | None) -> str:
    """What is wrong with the URL, in words that cannot carry its password: a malformed
    URL's parts are not reliably where they belong, so the parser's text is not echoed
    unless it is asyncpg's own, scrubbed."""
    text = str(error)
    if isinstance(error, asyncpg.ClientConfigurationError):
        return scrubbed(text, dsn)
    if "int()" in text or "port" in text.lower():
        return "its port is not a number"
    if "IPv6" in text:
        return "an IPv6 host is not closed with ]"
    return f"it is malformed ({type(error).__name__})"
