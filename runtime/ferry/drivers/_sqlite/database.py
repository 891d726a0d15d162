"""The driver's way into its SQLite file: a writer and a reader, migrated on first use.

Every write of the process goes through the one writer connection — SQLite admits one
writer per file at a time anyway, so a second would only wait on the first — and reads
(operator reads, step loads, the wake's poll) through the reader, which WAL lets run beside
any writer. Both belong to the driver and never to the application: a claim never shares
a connection with the application's transaction. Nothing is opened until the first call,
so building a driver at import time costs nothing.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from collections.abc import Callable, Mapping
from typing import TypeVar

from ferry._clock import Clock
from ferry.drivers._ledger import LedgerState, Migration
from ferry.drivers._sqlite.connection import (
    Role,
    check_sqlite_version,
    immediate,
    open_connection,
)
from ferry.drivers._sqlite.migrate import apply_migrations, read_ledger
from ferry.drivers._sqlite.target import SqliteTarget
from ferry.drivers._sqlite.thread import ConnectionThread
from ferry.drivers._stores.statements import Plan, statement_files
from ferry.errors import FerryError

T = TypeVar("T")


class Database:
    """Two connections to one file, migrated before the first statement runs on them."""

    def __init__(self, target: SqliteTarget, *, clock: Clock) -> None:
        check_sqlite_version()
        self.target = target
        self.clock = clock
        self.queries: Mapping[str, str] = {
            name: _dialect(text)
            for name, text in statement_files("ferry.drivers._sqlite.sql.queries").items()
        }
        self._writer: ConnectionThread | Inline = _thread(target, "writer")
        self._reader = self._writer if target.memory else _thread(target, "reader")
        self._migrated = False
        self._closed = False
        self._opening = asyncio.Lock()

    async def open(self) -> None:
        """Open the file and apply pending migrations, once; later calls return at once."""
        if self._migrated:
            return
        async with self._opening:
            if not self._migrated:
                await self.migrate()

    async def open_joining(self, *, in_transaction: bool) -> None:
        """``open``, before a statement on the application's connection: while its
        transaction is open it may hold the write lock migrating needs, so a file that
        still lacks migrations is refused (``X_MIGRATIONS_PENDING``), never waited on."""
        if self._migrated or not in_transaction:
            return await self.open()
        state = await self._reader.run(lambda c: read_ledger(c, self.queries, self.target.path))
        if state.problem is not None:
            raise state.problem
        if state.pending:
            raise FerryError(
                "X_MIGRATIONS_PENDING",
                f'the database "{self.target.path}" lacks migration(s) '
                f"{', '.join(m.label for m in state.pending)}, and the application's open "
                "transaction holds the write lock that applying them takes",
                "open the driver at start-up, before the first transaction on the file "
                "(`await driver.open()`), or run `ferry migrate` once",
            )
        await self.open()

    async def migrate(self) -> list[Migration]:
        """Apply pending migrations now; answers the migrations this call applied.

        A file that cannot be opened is ``X_DB_UNREACHABLE``; one migrated by a newer
        ferry, or with a drifted ledger, is refused (``X_SCHEMA_NEWER``,
        ``X_SCHEMA_DRIFT``) before anything runs on it.
        """
        self.check_open()
        path, now = self.target.path, self.clock.now_ms()
        applied = await self._writer.run(lambda c: apply_migrations(c, self.queries, path, now))
        self._migrated = True
        return applied

    async def inspect(self) -> tuple[str, LedgerState]:
        """The SQLite library and file, and the judged ledger, read without changing a thing
        (a missing file stays missing): what ``ferry doctor`` reports."""
        self.check_open()
        inspector = _thread(self.target, "inspector")

        def read(c: sqlite3.Connection) -> tuple[str, LedgerState]:
            [[mode]] = c.execute("PRAGMA journal_mode").fetchall()
            state = read_ledger(c, self.queries, self.target.path)
            return f"SQLite {sqlite3.sqlite_version} ({mode}) at {self.target.path}", state

        try:
            return await inspector.run(read)
        finally:
            await inspector.close()

    async def transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work`` on the writer inside a ``BEGIN IMMEDIATE`` transaction (shared with the
        writes queued meanwhile: ``thread``'s group commit), answered once committed."""
        await self.open()
        self.check_open()
        return await self._writer.transact(work)

    async def read(self, name: str, /, **parameters: object) -> list[sqlite3.Row]:
        """The rows of the read-only statement ``name``, on the reader (``_stores``)."""
        sql, bound = self.queries[name], _bound(parameters)
        await self.open()
        self.check_open()
        return await self._reader.run(lambda c: c.execute(sql, bound).fetchall())

    async def write(self, name: str, /, **parameters: object) -> list[sqlite3.Row]:
        """Run statement ``name`` on the writer (in its next commit); its ``RETURNING``
        rows."""
        sql, bound = self.queries[name], _bound(parameters)
        return await self.transaction(lambda c: c.execute(sql, bound).fetchall())

    async def atomic(self, plan: Plan[T]) -> T:
        """``plan``'s statements in one transaction on the writer."""
        return await self.transaction(lambda c: played(c, self.queries, plan))

    def check_open(self) -> None:
        """Refuse use after ``close``."""
        if self._closed:
            raise FerryError(
                "X_DRIVER_CLOSED",
                "the memory job driver was used after close()"
                if self.target.memory
                else f'the sqlite job driver on "{self.target.path}" was used after close()',
                "create a new driver, or close it only at shutdown",
            )

    async def close(self) -> None:
        """Close both connections (the file stays, with everything committed in it)."""
        if self._closed:
            return
        self._closed = True
        await self._writer.close()
        if self._reader is not self._writer:
            await self._reader.close()


def played(c: sqlite3.Connection, queries: Mapping[str, str], plan: Plan[T]) -> T:
    """Run ``plan``'s statements on ``c`` (in the caller's transaction); its answer."""
    rows: list[sqlite3.Row] | None = None
    try:
        while True:
            name, parameters = plan.send(rows)  # type: ignore[arg-type]
            rows = c.execute(queries[name], _bound(parameters)).fetchall()
    except StopIteration as done:
        answer: T = done.value
        return answer


_ANY = re.compile(r"= ANY\s*\((:[a-z_]+)\)")


def _dialect(sql: str) -> str:
    """A shared statement in SQLite's words: the table ``{schema}.jobs`` is ``ferry_jobs``,
    and ``x = ANY(:list)`` (Postgres' test against an array) reads the JSON array SQLite
    is given for a list (``_bound``): ``x IN (SELECT value FROM json_each(:list))``."""
    return _ANY.sub(r"IN (SELECT value FROM json_each(\1))", sql.replace("{schema}.", "ferry_"))


def _bound(parameters: Mapping[str, object]) -> dict[str, object]:
    """Named parameters as SQLite binds them: a list as a JSON array (``json_each``)."""
    return {k: json.dumps(v) if isinstance(v, list) else v for k, v in parameters.items()}


class Inline:
    """The in-memory store's one connection, used on the event loop itself: a database in
    memory answers in microseconds, so a thread would only add a hop to every call, and
    with one connection nothing can interleave between the awaits of one operation."""

    def __init__(self, target: SqliteTarget) -> None:
        self._connection = open_connection(target, "writer")

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return work(self._connection)

    async def transact(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return immediate(self._connection, work)

    async def close(self) -> None:
        self._connection.close()


def _thread(target: SqliteTarget, role: Role) -> ConnectionThread | Inline:
    if target.memory:
        return Inline(target)
    return ConnectionThread(
        target, lambda: open_connection(target, role), name=f"ferry-sqlite-{role}"
    )
