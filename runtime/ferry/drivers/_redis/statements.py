"""``Statements`` on Redis: a statement is the Lua script of its name.

The script gets the statement's named parameters as one JSON object (``ARGV[1]``, read by
``lib.lua``'s ``params()``) and answers its rows as JSON objects (``rows()``), so the
stores written once in ``ferry.drivers._stores`` run on Redis as they run on SQL. A
parameter that is None is left out of the object — JSON's null would reach Lua as
``cjson.null``, which is true in a test — and a column a row leaves out reads as NULL,
since a Lua table cannot hold a nil.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ferry._clock import Clock
from ferry.drivers._columns import Row
from ferry.drivers._redis.connection import Connection


class RedisStatements:
    """The driver's scripts, called as statements over its one connection."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    @property
    def clock(self) -> Clock:
        return self._connection.clock

    async def open(self) -> None:
        await self._connection.open()

    async def read(self, name: str, /, **parameters: object) -> Sequence[Row]:
        """The rows script ``name`` answers (every script is atomic; a read changes nothing)."""
        return await self.write(name, **parameters)

    async def write(self, name: str, /, **parameters: object) -> Sequence[Row]:
        given = {key: value for key, value in parameters.items() if value is not None}
        answer = await self._connection.run(name, json.dumps(given, separators=(",", ":")))
        return [_row(text) for text in answer]


def _row(text: str) -> Row:
    columns: defaultdict[str, Any] = defaultdict(lambda: None)
    columns.update(json.loads(text))
    return columns
