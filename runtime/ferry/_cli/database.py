"""Which database a command talks to: ``DATABASE_URL`` (or ``--database-url``/``--db``).

The URL's scheme picks the driver (``ferry.drivers.job_driver_from_url``): every command
and role runs on Postgres, a SQLite file or Redis alike.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ferry.drivers._url import job_driver_from_url
from ferry.drivers.protocol import JobDriver
from ferry.errors import FerryError


def add_database_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database-url",
        "--db",
        dest="database_url",
        default=None,
        help="postgresql://…, sqlite:///path.db or redis://… (default: $DATABASE_URL)",
    )
    parser.add_argument(
        "--schema",
        default=os.environ.get("FERRY_SCHEMA", "ferry"),
        help="the Postgres schema, or the Redis key prefix "
        "(default: $FERRY_SCHEMA or ferry; SQLite has none)",
    )


def configured_dsn(args: argparse.Namespace) -> str | None:
    """``--database-url``, else ``$DATABASE_URL``, else None."""
    return args.database_url or os.environ.get("DATABASE_URL") or None


def required_dsn(args: argparse.Namespace) -> str:
    """``configured_dsn``, or ``X_DRIVER_UNSET`` naming the command that needs one."""
    dsn = configured_dsn(args)
    if not dsn:
        raise FerryError(
            "X_DRIVER_UNSET",
            f"`ferry {' '.join(args.command_path)}` needs a database and DATABASE_URL is not set",
            "export DATABASE_URL=postgresql://user:pass@host/db or DATABASE_URL=sqlite:///"
            "ferry.db (or pass --database-url)",
        )
    return dsn


def driver_for(args: argparse.Namespace) -> JobDriver:
    """A driver on the configured database, not yet connected."""
    return job_driver_from_url(required_dsn(args), schema=args.schema)


async def open_driver(args: argparse.Namespace) -> JobDriver:
    """A connected, migrated driver on the configured database.

    Connecting and migrating is where an unreachable database (``X_DB_UNREACHABLE``), a bad
    URL (``X_DB_URL_INVALID``) and a schema this ferry must not run on (``X_SCHEMA_NEWER``,
    ``X_SCHEMA_DRIFT``) are refused — once, here, for every command and role.
    """
    driver = driver_for(args)
    try:
        await driver.open()
    except BaseException:
        await driver.close()
        raise
    return driver


@asynccontextmanager
async def opened_driver(
    args: argparse.Namespace, *, dsn: str | None
) -> AsyncIterator[JobDriver | None]:
    """A second driver on ``dsn`` (in the command's schema), closed afterwards; ``None``
    when no ``dsn`` is given (e.g. the relay's outbox on the queue's own database)."""
    if not dsn:
        yield None
        return
    driver = job_driver_from_url(dsn, schema=args.schema)
    try:
        await driver.open()
        yield driver
    finally:
        await driver.close()
