"""Versioned migrations on one SQLite file: ``sql/migrations/NNNN_name.sql``, in order.

Every process applies them when it first touches the file, so many processes starting
together must not trip over each other: the check-and-apply runs in one ``BEGIN
IMMEDIATE`` transaction, whose write lock on the file serialises migrators the way the
Postgres driver's advisory lock does, and SQLite's DDL is transactional, so a migration
lands whole or not at all. The ledger is judged first (``ferry.drivers._ledger``): a file
migrated by a newer ferry, or whose ledger disagrees with the shipped files, is refused.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path

from ferry.drivers._ledger import (
    LedgerPlace,
    LedgerRow,
    LedgerState,
    Migration,
    judge,
    objects_exist,
    record_of,
    shipped_migrations,
)
from ferry.drivers._sqlite.connection import immediate


def known_migrations() -> tuple[Migration, ...]:
    """Every migration this version of ferry ships for SQLite, in version order."""
    return shipped_migrations("ferry.drivers._sqlite.sql.migrations")


def place_of(path: Path) -> LedgerPlace:
    """Where the ledger of the file at ``path`` lives, as its refusals name it."""
    return LedgerPlace(
        where=f'database "{path}"',
        table="ferry_migrations",
        fresh="migrate a fresh database file",
    )


def read_ledger(
    connection: sqlite3.Connection, queries: Mapping[str, str], path: Path
) -> LedgerState:
    """Read the ledger and judge it; applies and changes nothing."""
    [[exists]] = connection.execute(queries["migrations_ledger_exists"]).fetchall()
    if not exists:  # a new file (or a lost ledger: applying finds the tables, see below)
        return LedgerState(known_migrations(), (), None)
    rows = [
        LedgerRow(row["version"], row["name"], row["checksum"])
        for row in connection.execute(queries["migrations_applied"])
    ]
    return judge(rows, known_migrations(), place_of(path))


def apply_migrations(
    connection: sqlite3.Connection, queries: Mapping[str, str], path: Path, now_ms: int
) -> list[Migration]:
    """Apply every migration the file lacks; answers the migrations this call applied."""
    state = read_ledger(connection, queries, path)
    if state.problem is not None:
        raise state.problem
    if not state.pending and not state.unchecked:
        return []  # the usual start: one read, no lock taken
    # Committed on its own: a refusal below still leaves the ledger its fix line writes to.
    immediate(connection, lambda c: c.execute(queries["migrations_prepare"]))

    def apply(c: sqlite3.Connection) -> list[Migration]:
        state = read_ledger(c, queries, path)  # again, under the lock: another may have won
        if state.problem is not None:
            raise state.problem
        for migration in state.unchecked:
            c.execute(
                queries["migration_checksum"],
                {"version": migration.version, "checksum": migration.checksum},
            )
        for migration in state.pending:
            for statement in statements(migration.sql):
                try:
                    c.execute(statement)
                except sqlite3.OperationalError as error:
                    if "already exists" in str(error):
                        raise objects_exist(place_of(path), migration, error) from None
                    raise
            c.execute(queries["migration_record"], {"now": now_ms, **record_of(migration)})
        return list(state.pending)

    return immediate(connection, apply)


def statements(sql: str) -> Iterator[str]:
    """The statements of a migration file, one at a time (``executescript`` would commit
    the transaction they must run in)."""
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer
            buffer = ""
