"""Versioned migrations: ``sql/migrations/NNNN_name.sql``, applied in order, recorded once.

Every process applies them at start (and ``ferry migrate`` on demand), so many pods
starting together must not trip over each other: the check-and-apply runs in one
transaction under an advisory lock on the schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from ferry._clock import Clock
from ferry.drivers._postgres.queries import Queries
from ferry.errors import FerryError

_Session: TypeAlias = "PoolConnectionProxy[asyncpg.Record] | asyncpg.Connection[asyncpg.Record]"


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered SQL file."""

    version: int
    name: str
    sql: str


@cache
def known_migrations() -> tuple[Migration, ...]:
    """Every migration this version of ferry ships, in version order."""
    folder = resources.files("ferry.drivers._postgres.sql.migrations")
    migrations = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            number, _, name = entry.name.removesuffix(".sql").partition("_")
            migrations.append(Migration(int(number), name, entry.read_text(encoding="utf-8")))
    versions = [m.version for m in migrations]
    clashes = sorted(
        {f"{m.version:04d}_{m.name}" for m in migrations if versions.count(m.version) > 1}
    )
    if clashes:
        raise FerryError(
            "X_INVARIANT",
            f"postgres migrations {', '.join(clashes)} share a version number",
            "renumber one of them to the next free number; applied versions are never reused",
        )
    return tuple(sorted(migrations, key=lambda m: m.version))


async def apply_migrations(
    connection: PoolConnectionProxy[asyncpg.Record], queries: Queries, clock: Clock
) -> list[int]:
    """Apply every migration the schema lacks; answers the versions this call applied."""
    wanted = known_migrations()
    if {m.version for m in wanted} <= await _applied(connection, queries):
        return []  # the usual start: nothing to do, no lock taken
    async with connection.transaction():
        # A transaction-scoped advisory lock is the right tool here, unlike for the
        # scheduler's leadership: it guards a few milliseconds of DDL, is released by
        # commit, rollback or a dropped session, and nothing needs to see or fence it.
        # It also covers CREATE SCHEMA IF NOT EXISTS, which races without it.
        await connection.execute(queries["migrations_lock"], queries.schema)
        await connection.execute(queries["migrations_prepare"])
        applied = await _applied(connection, queries)
        pending = [m for m in wanted if m.version not in applied]
        for migration in pending:
            await connection.execute(queries.render(migration.sql))
            await connection.execute(
                queries["migration_record"], migration.version, migration.name, clock.now_ms()
            )
    return [m.version for m in pending]


async def _applied(connection: _Session, queries: Queries) -> set[int]:
    """Versions recorded in the schema's ledger (none when the schema is new)."""
    try:
        rows = await connection.fetch(queries["migrations_applied"])
    except asyncpg.UndefinedTableError:
        return set()
    return {row["version"] for row in rows}


async def pending_migrations(connection: _Session, queries: Queries) -> list[int]:
    """Versions this ferry ships that the schema has not recorded (applies nothing)."""
    applied = await _applied(connection, queries)
    return [m.version for m in known_migrations() if m.version not in applied]
