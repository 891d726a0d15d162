"""Opening a ``sqlite3`` connection for the driver, and the refusals its failures become.

Why ``BEGIN IMMEDIATE`` everywhere the driver writes: a deferred transaction that reads and
then writes cannot wait for another writer in WAL mode — SQLite answers ``SQLITE_BUSY`` at
once, since its snapshot may be stale — while an immediate one takes the write lock first
and so waits, up to ``busy_timeout``, like a single statement does.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar
from urllib.parse import quote

from ferry.drivers._containment import contains_text
from ferry.drivers._sqlite.target import SqliteTarget
from ferry.errors import FerryError

T = TypeVar("T")

Role = Literal["writer", "reader", "watcher", "inspector"]
"""The writer sets the file up and does every write; the reader only reads; the wake's
watcher reads a file that exists (it never creates one); an inspector opens the file
read-only (``ferry doctor``: not even a missing file is created)."""

MIN_SQLITE = (3, 37, 0)
"""``RETURNING`` (3.35) and ``STRICT`` tables (3.37)."""

WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024
"""The WAL file is truncated back to this after a checkpoint, so it never keeps growing."""

_WAL_RETRY_S = 0.005

_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
_UNUSABLE = {
    sqlite3.SQLITE_CANTOPEN,
    sqlite3.SQLITE_PERM,
    sqlite3.SQLITE_READONLY,
    sqlite3.SQLITE_IOERR,
    sqlite3.SQLITE_FULL,
    sqlite3.SQLITE_NOTADB,
    sqlite3.SQLITE_CORRUPT,
    sqlite3.SQLITE_PROTOCOL,
    sqlite3.SQLITE_NOLFS,
    sqlite3.SQLITE_AUTH,
}


def check_sqlite_version() -> None:
    """Refuse a Python whose SQLite library lacks what the driver's SQL uses."""
    if sqlite3.sqlite_version_info < MIN_SQLITE:
        needed = ".".join(map(str, MIN_SQLITE))
        raise FerryError(
            "X_INVARIANT",
            f"this Python's SQLite library is {sqlite3.sqlite_version}; the sqlite driver "
            f"needs {needed} or newer (RETURNING, STRICT tables)",
            "run a Python built against a newer SQLite (python.org and the official Docker "
            "images carry one), or use postgres_job_driver()",
        )


def open_connection(target: SqliteTarget, role: Role) -> sqlite3.Connection:
    """A ``sqlite3`` connection to ``target`` set up for ``role``: autocommit (the driver
    writes ``BEGIN IMMEDIATE`` itself), rows read by column name, the busy timeout."""
    if target.memory:
        connection = sqlite3.connect(":memory:", isolation_level=None)
    elif role in ("watcher", "inspector"):
        mode = "ro" if role == "inspector" else "rw"
        uri = f"file:{quote(str(target.path))}?mode={mode}"
        connection = sqlite3.connect(uri, uri=True, isolation_level=None)
    else:
        connection = sqlite3.connect(target.path, isolation_level=None)
    try:
        connection.row_factory = sqlite3.Row
        connection.execute(f"PRAGMA busy_timeout = {target.busy_timeout_ms}")
        if role == "writer" and not target.memory:
            # WAL: readers never block the writer nor it them, and a commit appends to the
            # log instead of rewriting pages. It is a property of the file, kept across
            # connections, so the application's connections use it too.
            _switch_to_wal(connection, target)
            connection.execute(f"PRAGMA synchronous = {target.synchronous.upper()}")
            connection.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES}")
        connection.execute("PRAGMA foreign_keys = ON")
        # An input search (RunFilter.input_contains) by jsonb's containment rules.
        connection.create_function("ferry_json_contains", 2, contains_text, deterministic=True)
    except BaseException:
        connection.close()
        raise
    return connection


def immediate(connection: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """``work`` in one ``BEGIN IMMEDIATE`` transaction: committed when it returns, rolled
    back when it raises. Holding the file's write lock from the first read to the commit,
    it sees nothing change under it — the SQLite form of a row lock."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        result = work(connection)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return result


def refusal_for(error: sqlite3.Error, target: SqliteTarget) -> FerryError | None:
    """The refusal ``error`` stands for on ``target``, or None when it is not about the
    file being usable (a bug stays a traceback)."""
    code = getattr(error, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in _BUSY:
        return FerryError(
            "X_DB_BUSY",
            f"the SQLite database {target.path} stayed locked by another connection for "
            f"longer than busy_timeout ({target.busy_timeout_ms} ms)",
            "keep write transactions on this file short (the application's BEGIN … COMMIT "
            "included), or raise the timeout (sqlite:///…?busy_timeout_ms=10000)",
        )
    if primary in _UNUSABLE:
        name = getattr(error, "sqlite_errorname", "SQLITE_ERROR")
        return unusable(target.path, f"{name}: {error}")
    return None


def unusable(path: Path, problem: str) -> FerryError:
    """``X_DB_UNREACHABLE`` for a file this process cannot use as its database."""
    return FerryError(
        "X_DB_UNREACHABLE",
        f"cannot use the SQLite database at {path}: {problem}",
        "check the path in DATABASE_URL (sqlite:///relative.db or sqlite:////absolute.db): "
        "its directory exists, this process may read and write the file and the -wal and "
        "-shm files beside it, and it is on a local disk (SQLite's locks do not hold over "
        "a network file system)",
    )


def _switch_to_wal(connection: sqlite3.Connection, target: SqliteTarget) -> None:
    """Put the file in WAL mode, waiting up to the busy timeout. Switching needs the file
    to itself for a moment and SQLite does not wait for that on its own: while other
    processes open a new file at the same time it answers "database is locked" at once."""
    deadline = time.monotonic() + target.busy_timeout_ms / 1000
    while True:
        try:
            [mode] = connection.execute("PRAGMA journal_mode = WAL").fetchone()
        except sqlite3.OperationalError as error:
            if getattr(error, "sqlite_errorcode", None) != sqlite3.SQLITE_BUSY:
                raise
            if time.monotonic() >= deadline:
                raise  # X_DB_BUSY, like any lock held past the timeout
        else:
            if mode == "wal":
                return
            if time.monotonic() >= deadline:
                raise _no_wal(target.path, mode)
        time.sleep(_WAL_RETRY_S)


def _no_wal(path: Path, mode: str) -> FerryError:
    return unusable(path, f"it cannot be switched to WAL mode (journal_mode stays {mode!r})")
