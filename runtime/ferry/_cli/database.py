"""Which database a command talks to: ``DATABASE_URL`` (or ``--database-url``)."""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ferry.drivers._postgres import PostgresJobDriver, postgres_job_driver
from ferry.errors import FerryError


def add_database_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--database-url", default=None, help="default: $DATABASE_URL")
    parser.add_argument("--schema", default=os.environ.get("FERRY_SCHEMA", "ferry"))


def configured_dsn(args: argparse.Namespace) -> str | None:
    """``--database-url``, else ``$DATABASE_URL``, else None."""
    return args.database_url or os.environ.get("DATABASE_URL") or None


async def open_driver(args: argparse.Namespace, *, embedded: bool = False) -> PostgresJobDriver:
    """A migrated driver on the configured database (the embedded one only if allowed)."""
    dsn = configured_dsn(args)
    if not dsn and embedded:
        from ferry._embedded import embedded_database_url

        dsn = embedded_database_url()
    if not dsn:
        raise FerryError(
            "X_DRIVER_UNSET",
            f"`ferry {' '.join(args.command_path)}` needs a database and DATABASE_URL is not set",
            "export DATABASE_URL=postgresql://user:pass@host/db (or pass --database-url)",
        )
    driver = postgres_job_driver(dsn, schema=args.schema)
    await driver.open()
    return driver


@asynccontextmanager
async def opened_driver(
    args: argparse.Namespace, *, dsn: str | None
) -> AsyncIterator[PostgresJobDriver | None]:
    """A second driver on ``dsn`` in the command's schema, closed afterwards; ``None`` when
    no ``dsn`` is given (e.g. the relay's outbox on the queue's own database)."""
    if not dsn:
        yield None
        return
    driver = postgres_job_driver(dsn, schema=args.schema)
    try:
        await driver.open()
        yield driver
    finally:
        await driver.close()
