"""The migration ledger of a driver, judged against the migrations this ferry ships.

Each durable driver ships numbered ``NNNN_name.sql`` files in its own ``sql/migrations``
folder (Redis: ``NNNN_name.lua`` scripts in ``lua/migrations``) and records the applied
ones in a ledger beside its data (a table; on Redis a hash). The ledger is what every
process reads at start to decide what to apply, so it is trusted only while it agrees
with the files: a row from a newer ferry (``X_SCHEMA_NEWER`` — this code would run on
tables it does not know) or a row whose name or checksum is not the shipped file's
(``X_SCHEMA_DRIFT``) stops the process before it touches a run. The rules and their
refusals live here once; a driver supplies where its ledger lives (``LedgerPlace``) and
how to read it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ferry.errors import FerryError


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


@dataclass(frozen=True, slots=True)
class LedgerPlace:
    """Where one database's ledger lives, in the words its refusals use."""

    where: str
    """The tables' home as a person names it: ``schema "ferry"``, ``database "/srv/q.db"``."""
    table: str
    """The ledger table as SQL names it in a fix line: ``"ferry".migrations``."""
    fresh: str
    """How to start over beside it: ``migrate a fresh schema (--schema)``."""


@cache
def shipped_migrations(package: str, suffix: str = ".sql") -> tuple[Migration, ...]:
    """Every migration in ``package`` (a driver's ``sql/migrations``; Redis' Lua ones in
    ``lua/migrations``, ``suffix`` ``.lua``), in version order.

    Numbers are never reused and never filled in: a gap stays a gap, so a database
    migrated by an earlier ferry keeps matching the files.
    """
    folder = resources.files(package)
    migrations = []
    for entry in folder.iterdir():
        if entry.name.endswith(suffix):
            number, _, name = entry.name.removesuffix(suffix).partition("_")
            sql = entry.read_text(encoding="utf-8")
            migrations.append(Migration(int(number), name, sql, _checksum(sql)))
    versions = [m.version for m in migrations]
    clashes = sorted({m.label for m in migrations if versions.count(m.version) > 1})
    if clashes:
        raise FerryError(
            "X_INVARIANT",
            f"migrations {', '.join(clashes)} of {package} share a version number",
            "renumber one of them to the next free number; applied versions are never reused",
        )
    return tuple(sorted(migrations, key=lambda m: m.version))


def judge(rows: list[LedgerRow], shipped: tuple[Migration, ...], place: LedgerPlace) -> LedgerState:
    """The state of a database whose ledger holds ``rows``."""
    by_version = {m.version: m for m in shipped}
    recorded = {row.version for row in rows}
    pending = tuple(m for m in shipped if m.version not in recorded)
    newest = shipped[-1]
    newer = [row for row in rows if row.version > newest.version]
    if newer:
        return LedgerState(pending, (), _newer(place, newer[-1], newest))
    unchecked: list[Migration] = []
    for row in rows:
        migration = by_version.get(row.version)
        if migration is None or migration.name != row.name:
            return LedgerState(pending, (), _renamed(place, row, migration))
        if row.checksum is None:
            unchecked.append(migration)
        elif row.checksum != migration.checksum:
            return LedgerState(pending, (), _edited(place, row, migration))
    return LedgerState(pending, tuple(unchecked), None)


def objects_exist(place: LedgerPlace, migration: Migration, exists: object) -> FerryError:
    """``X_SCHEMA_DRIFT``: applying ``migration`` found what it creates already there."""
    return FerryError(
        "X_SCHEMA_DRIFT",
        f"{place.where} has no ledger row for migration {migration.label}, yet what it "
        f"creates already exists ({exists})",
        f"if {migration.label} was applied without its row (a restored dump, a script run by "
        f"hand), record it: INSERT INTO {place.table} (version, name, applied_at_ms, "
        f"checksum) VALUES ({migration.version}, '{migration.name}', 0, '{migration.checksum}')"
        " — then run `ferry migrate` again; otherwise restore the database from a backup",
    )


def _newer(place: LedgerPlace, row: LedgerRow, newest: Migration) -> FerryError:
    return FerryError(
        "X_SCHEMA_NEWER",
        f"{place.where} is at migration {row.version:04d}_{row.name}, newer than this "
        f"ferry, which ships migrations up to {newest.label}",
        "run a ferry at least as new as the one that migrated it (roll the deploy "
        "forward); going back past a migration takes a restore of the database",
    )


def _renamed(place: LedgerPlace, row: LedgerRow, shipped: Migration | None) -> FerryError:
    ours = f"ships {shipped.label}" if shipped is not None else "ships no migration by that number"
    return FerryError(
        "X_SCHEMA_DRIFT",
        f"{place.where} records migration {row.version:04d}_{row.name}, but this ferry "
        f"{ours}: it was migrated by another build",
        f"run the ferry build that migrated it, or {place.fresh} and move the runs over",
    )


def _edited(place: LedgerPlace, row: LedgerRow, shipped: Migration) -> FerryError:
    return FerryError(
        "X_SCHEMA_DRIFT",
        f"migration {shipped.label} applied to {place.where} is not the file this ferry "
        f"ships (checksum {str(row.checksum)[:12]}… recorded, {shipped.checksum[:12]}… shipped)",
        "a released migration is never edited: restore the shipped file; if the edit is known "
        f"to change nothing in the database, record it: UPDATE {place.table} SET "
        f"checksum = '{shipped.checksum}' WHERE version = {shipped.version}",
    )


def _checksum(sql: str) -> str:
    """sha256 of a migration's text, the same whatever line ends a checkout gave it."""
    text = "\n".join(line.rstrip() for line in sql.splitlines()).strip()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
