"""The Postgres migration ledger (``<schema>.migrations``), judged by ``ferry.drivers._ledger``.

``migrate`` applies from here and ``ferry doctor`` reports from here, so the two never
disagree. The one drift only applying can show — a migration with no row whose objects
exist — is ``objects_exist``.
"""

from __future__ import annotations

from typing import TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from ferry.drivers._ledger import (
    LedgerPlace,
    LedgerRow,
    LedgerState,
    Migration,
    judge,
    shipped_migrations,
)
from ferry.drivers._postgres.queries import Queries

__all__ = ["LedgerState", "Migration", "known_migrations", "place_of", "read_ledger"]

Session: TypeAlias = "PoolConnectionProxy[asyncpg.Record] | asyncpg.Connection[asyncpg.Record]"


def known_migrations() -> tuple[Migration, ...]:
    """Every migration this version of ferry ships for Postgres, in version order.

    0004 was never shipped, and a database migrated by any earlier ferry records 0005 and
    0006 under those numbers.
    """
    return shipped_migrations("ferry.drivers._postgres.sql.migrations")


def place_of(schema: str) -> LedgerPlace:
    """Where the ledger of ``schema`` lives, as its refusals name it."""
    return LedgerPlace(
        where=f'schema "{schema}"',
        table=f'"{schema}".migrations',
        fresh="migrate a fresh schema (--schema)",
    )


async def read_ledger(connection: Session, queries: Queries) -> LedgerState:
    """Read the ledger and judge it; applies and changes nothing."""
    try:
        records = await connection.fetch(queries["migrations_applied"])
    except asyncpg.UndefinedTableError:  # a new schema (or a lost ledger: see objects_exist)
        return LedgerState(known_migrations(), (), None)
    rows = [LedgerRow(r["version"], r["name"], r["checksum"]) for r in records]
    return judge(rows, known_migrations(), place_of(queries.schema))
