"""Versioned migrations: ``sql/migrations/NNNN_name.sql``, applied in order, recorded once.

Every process applies them at start (and ``ferry migrate`` on demand), so many pods
starting together must not trip over each other: the check-and-apply runs in one
transaction under an advisory lock on the schema. Before anything is applied the ledger
is judged (``ledger``): a schema newer than this ferry, or one whose ledger disagrees with
the shipped files, is refused in every role and command alike.
"""

from __future__ import annotations

import asyncpg

from ferry._clock import Clock
from ferry.drivers._ledger import Migration, objects_exist
from ferry.drivers._postgres.ledger import Session, place_of, read_ledger
from ferry.drivers._postgres.queries import Queries

#: What a migration raises when what it creates is already there (its ledger row is not).
_ALREADY_THERE = (
    asyncpg.DuplicateTableError,
    asyncpg.DuplicateColumnError,
    asyncpg.DuplicateObjectError,
    asyncpg.DuplicateFunctionError,
)


async def apply_migrations(connection: Session, queries: Queries, clock: Clock) -> list[Migration]:
    """Apply every migration the schema lacks; answers the migrations this call applied."""
    state = await read_ledger(connection, queries)
    if state.problem is not None:
        raise state.problem
    if not state.pending and not state.unchecked:
        return []  # the usual start: one read, no lock taken
    async with connection.transaction():
        # A transaction-scoped advisory lock is the right tool here, unlike for the
        # scheduler's leadership: it guards a few milliseconds of DDL, is released by
        # commit, rollback or a dropped session, and nothing needs to see or fence it.
        # It also covers CREATE SCHEMA IF NOT EXISTS, which races without it.
        await connection.execute(queries["migrations_lock"], queries.schema)
        # Committed on its own: a refusal below still leaves the ledger its fix line writes to.
        await connection.execute(queries["migrations_prepare"])
    async with connection.transaction():
        await connection.execute(queries["migrations_lock"], queries.schema)
        state = await read_ledger(connection, queries)  # again: another process may have won
        if state.problem is not None:
            raise state.problem
        for migration in state.unchecked:
            await connection.execute(
                queries["migration_checksum"], migration.version, migration.checksum
            )
        for migration in state.pending:
            try:
                await connection.execute(queries.render(migration.sql))
            except _ALREADY_THERE as exists:
                raise objects_exist(place_of(queries.schema), migration, exists) from None
            await connection.execute(
                queries["migration_record"],
                migration.version,
                migration.name,
                clock.now_ms(),
                migration.checksum,
            )
    return list(state.pending)
