"""``Statements``: what a driver offers the stores written once above it.

A statement is called by its file's name with named parameters (``:name`` in the text);
Postgres turns them into ``$n`` once when it loads the text, SQLite binds them as they are.
A list parameter reaches Postgres as an array and SQLite as a JSON array (``json_each``),
so the Python side passes the same list to both. On Redis a statement is the Lua script of
that name, given the same parameters and answering the same rows (``_redis.statements``).
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from typing import Protocol, TypeAlias, TypeVar

from ferry._clock import Clock
from ferry.drivers._columns import Row, run_pk
from ferry.drivers._sql import sql_files
from ferry.errors import FerryError

T = TypeVar("T")

Plan: TypeAlias = Generator[tuple[str, Mapping[str, object]], Sequence[Row], T]
"""Statements run in one transaction: the plan yields a statement's name and parameters,
receives its rows, and returns its answer (the Python between them runs in the
transaction too, so what it decides on cannot change before the next write)."""

SHARED = "ferry.drivers._stores.sql"
"""The package of the statements whose text both dialects agree on."""


class Statements(Protocol):
    """One store's named statements, and its clock: a SQL driver's text per name, or a
    Redis driver's Lua script per name (``_redis.statements``)."""

    @property
    def clock(self) -> Clock: ...

    async def open(self) -> None:
        """Connect and migrate, as every call does first (a call that needs no statement
        still refuses a closed driver, and creates the store, like one that does)."""

    async def read(self, name: str, /, **parameters: object) -> Sequence[Row]:
        """The rows of the read-only statement ``name`` (SQLite: on its reader)."""
        ...

    async def write(self, name: str, /, **parameters: object) -> Sequence[Row]:
        """Run the statement ``name`` in a transaction of its own; its ``RETURNING`` rows
        (a statement that answers whether it landed returns a row only when it did)."""
        ...


class Transactional(Statements, Protocol):
    """Statements that also run as one transaction with Python between them: a SQL store
    (Redis runs one script at a time, so what needs this is a SQL one: transfer's import,
    and ``_stores.actions.PlannedActions``, where Redis has a script per action)."""

    async def atomic(self, plan: Plan[T]) -> T:
        """Run ``plan``'s statements in one transaction; its answer once committed."""
        ...


async def row_of(statements: Statements, job_id: str) -> int | None:
    """The row id run ``job_id`` names; None when no run can have that id — after opening
    the store all the same, as a call that runs a statement would (``Statements.open``)."""
    pk = run_pk(job_id)
    if pk is None:
        await statements.open()
    return pk


def statement_files(own: str) -> Mapping[str, str]:
    """The shared statements and a dialect's own (package ``own``), by name; a name in both
    would be a twin, and is refused."""
    shared, mine = sql_files(SHARED), sql_files(own)
    twins = sorted(shared.keys() & mine.keys())
    if twins:
        raise FerryError(
            "X_INVARIANT",
            f"{own} repeats the shared SQL statement(s) {', '.join(twins)}",
            "keep one text per statement: the dialect's own, or the shared one",
        )
    return {**shared, **mine}
