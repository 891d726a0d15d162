"""The migration ledger, judged against the migrations this ferry ships.

The ledger (``<schema>.migrations``) is what every process reads at start to decide what
to apply, so it is trusted only while it agrees with the files: a row from a newer ferry
(``X_SCHEMA_NEWER`` — this code would run on tables it does not know) or a row whose name
or checksum is not the shipped file's (``X_SCHEMA_DRIFT``) stops the process before it
touches a run. ``migrate`` applies from here and ``ferry doctor`` reports from here, so
the two never disagree. The one drift only applying can show — a migration with no row
whose objects exist — is ``objects_exist``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from ferry.drivers._postgres.queries import Queries
from ferry.errors import FerryError

Session: TypeAlias = "PoolConnectionProxy[asyncpg.Record] | asyncpg.Connection[asyncpg.Record]"


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered SQL file; ``checksum`` is the sha256 of its text (line ends ignored)."""

    version: int
    name: str
    sql: str
    checksum: str

    @property
    def label(self) -> str:
        """``0005_cancel_requests``: the file's own name, as people look it up."""
        return f"{self.version:04d}_{self.name}"


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One applied migration as the ledger records it (``checksum`` None: recorded before
    ferry kept checksums)."""

    version: int
    name: str
    checksum: str | None


@dataclass(frozen=True, slots=True)
class LedgerState:
    """What the ledger says against what this ferry ships."""

    pending: tuple[Migration, ...]
    """Shipped migrations the ledger does not record, in version order."""
    unchecked: tuple[Migration, ...]
    """Recorded migrations whose row has no checksum yet (filled in by the next migrate)."""
    problem: FerryError | None
    """Why the schema must not be used as it is, or None."""


@cache
def known_migrations() -> tuple[Migration, ...]:
    """Every migration this version of ferry ships, in version order.

    Numbers are never reused and never filled in: 0004 was never shipped, and a database
    migrated by any earlier ferry records 0005 and 0006 under those numbers.
    """
    folder = resources.files("ferry.drivers._postgres.sql.migrations")
    migrations = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            number, _, name = entry.name.removesuffix(".sql").partition("_")
            sql = entry.read_text(encoding="utf-8")
            migrations.append(Migration(int(number), name, sql, _checksum(sql)))
    versions = [m.version for m in migrations]
    clashes = sorted({m.label for m in migrations if versions.count(m.version) > 1})
    if clashes:
        raise FerryError(
            "X_INVARIANT",
            f"postgres migrations {', '.join(clashes)} share a version number",
            "renumber one of them to the next free number; applied versions are never reused",
        )
    return tuple(sorted(migrations, key=lambda m: m.version))


async def read_ledger(connection: Session, queries: Queries) -> LedgerState:
    """Read the ledger and judge it; applies and changes nothing."""
    try:
        records = await connection.fetch(queries["migrations_applied"])
    except asyncpg.UndefinedTableError:  # a new schema (or a lost ledger: see objects_exist)
        return LedgerState(known_migrations(), (), None)
    rows = [LedgerRow(r["version"], r["name"], r["checksum"]) for r in records]
    return judge(rows, queries.schema)


def judge(rows: list[LedgerRow], schema: str) -> LedgerState:
    """The state of a schema whose ledger holds ``rows``."""
    shipped = {m.version: m for m in known_migrations()}
    recorded = {row.version: row for row in rows}
    pending = tuple(m for m in shipped.values() if m.version not in recorded)
    newest = known_migrations()[-1]
    newer = [row for row in rows if row.version > newest.version]
    if newer:
        return LedgerState(pending, (), _newer(schema, newer[-1], newest))
    unchecked: list[Migration] = []
    for row in rows:
        migration = shipped.get(row.version)
        if migration is None or migration.name != row.name:
            return LedgerState(pending, (), _renamed(schema, row, migration))
        if row.checksum is None:
            unchecked.append(migration)
        elif row.checksum != migration.checksum:
            return LedgerState(pending, (), _edited(schema, row, migration))
    return LedgerState(pending, tuple(unchecked), None)


def objects_exist(schema: str, migration: Migration, exists: asyncpg.PostgresError) -> FerryError:
    """``X_SCHEMA_DRIFT``: applying ``migration`` found what it creates already there."""
    return FerryError(
        "X_SCHEMA_DRIFT",
        f'schema "{schema}" has no ledger row for migration {migration.label}, yet what it '
        f"creates already exists ({exists})",
        f"if {migration.label} was applied without its row (a restored dump, a script run by "
        f'hand), record it: INSERT INTO "{schema}".migrations (version, name, applied_at_ms, '
        f"checksum) VALUES ({migration.version}, '{migration.name}', 0, '{migration.checksum}')"
        " — then run `ferry migrate` again; otherwise restore the schema from a backup",
    )


def _newer(schema: str, row: LedgerRow, newest: Migration) -> FerryError:
    return FerryError(
        "X_SCHEMA_NEWER",
        f'schema "{schema}" is at migration {row.version:04d}_{row.name}, newer than this '
        f"ferry, which ships migrations up to {newest.label}",
        "run a ferry at least as new as the one that migrated this schema (roll the deploy "
        "forward); going back past a migration takes a restore of the database",
    )


def _renamed(schema: str, row: LedgerRow, shipped: Migration | None) -> FerryError:
    ours = f"ships {shipped.label}" if shipped is not None else "ships no migration by that number"
    return FerryError(
        "X_SCHEMA_DRIFT",
        f'schema "{schema}" records migration {row.version:04d}_{row.name}, but this ferry '
        f"{ours}: the schema was migrated by another build",
        "run the ferry build that migrated this schema, or migrate a fresh schema (--schema) "
        "and move the runs over",
    )


def _edited(schema: str, row: LedgerRow, shipped: Migration) -> FerryError:
    return FerryError(
        "X_SCHEMA_DRIFT",
        f'migration {shipped.label} applied to schema "{schema}" is not the file this ferry '
        f"ships (checksum {str(row.checksum)[:12]}… recorded, {shipped.checksum[:12]}… shipped)",
        "a released migration is never edited: restore the shipped file; if the edit is known "
        f'to change nothing in the database, record it: UPDATE "{schema}".migrations SET '
        f"checksum = '{shipped.checksum}' WHERE version = {shipped.version}",
    )


def _checksum(sql: str) -> str:
    """sha256 of a migration's text, the same whatever line ends a checkout gave it."""
    text = "\n".join(line.rstrip() for line in sql.splitlines()).strip()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
