"""The application's connection, when an enqueue or an outbox append joins its transaction.

The caller hands over the ``aiosqlite`` connection its transaction runs on — the asyncio
binding of ``sqlite3`` applications use (SQLAlchemy's async SQLite dialect wraps one, as
``raw_connection.driver_connection``). The statement then runs on that connection, inside
that transaction: committed, the run or the entry exists; rolled back, it never did.
Anything else is refused, and so is a connection to another file, where ferry's tables
are not.
"""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING, Any

from ferry._extras import require_extra
from ferry.drivers._sqlite.database import Database
from ferry.errors import FerryError

if TYPE_CHECKING:
    import aiosqlite

_FIX = (
    "pass the aiosqlite connection whose transaction it must join, opened on the driver's "
    "file: `async with aiosqlite.connect(path) as conn:` … connection=conn … "
    "`await conn.commit()`"
)
_checked: weakref.WeakSet[Any] = weakref.WeakSet()


async def joined_connection(
    connection: Any, database: Database, *, what: str
) -> aiosqlite.Connection:
    """``connection`` once it is known to be an ``aiosqlite`` connection on ``database``'s
    file (and the file migrated); else ``X_DRIVER_NO_TRANSACTIONS`` naming ``what``
    (``X_EXTRA_MISSING`` when aiosqlite, of ``ferry[sqlite]``, is not installed)."""
    require_extra("sqlite", feature=f"{what} joining the caller's SQLite transaction")
    import aiosqlite

    if not isinstance(connection, aiosqlite.Connection):
        kind = "None" if connection is None else type(connection).__name__
        raise FerryError(
            "X_DRIVER_NO_TRANSACTIONS",
            f"{what} was given a {kind}, not an aiosqlite connection, so it cannot join "
            "the caller's transaction",
            _FIX,
        )
    await database.open_joining(in_transaction=connection.in_transaction)
    if connection not in _checked:
        rows = await connection.execute_fetchall("PRAGMA database_list")
        main = next((str(row[2]) for row in rows if row[1] == "main"), "")
        if not main or not _same_file(main, database):
            raise FerryError(
                "X_DRIVER_NO_TRANSACTIONS",
                f"{what} was given a connection to {main or 'an in-memory database'}, not "
                f"to the driver's database {database.target.path}, so it cannot join the "
                "caller's transaction there",
                _FIX,
            )
        _checked.add(connection)
    return connection


def _same_file(path: str, database: Database) -> bool:
    try:
        return os.path.samefile(path, database.target.path)
    except OSError:
        return False
