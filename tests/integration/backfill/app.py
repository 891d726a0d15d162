"""The app the worker processes under test run (``--app backfill.app``).

``copy_rows`` copies ``source`` into ``target`` ten rows a page, pausing after each page
so a test can kill the worker mid-pass; every page fetch is recorded with the fetching
process's pid, so a test sees where each worker started.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

import asyncpg
from pydantic import BaseModel

from ferry._backfill import BackfillPage, backfill
from ferry.drivers.protocol import JsonValue

TABLES = """
CREATE TABLE {schema}.source (id integer PRIMARY KEY);
CREATE TABLE {schema}.target (id integer PRIMARY KEY);
CREATE TABLE {schema}.page_fetches (
    seq    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    cursor integer,
    pid    integer NOT NULL
);
"""

_pool: asyncpg.Pool | None = None


async def _db() -> asyncpg.Pool:
    global _pool
    if _pool is None:
        _pool = await asyncpg.create_pool(os.environ["DATABASE_URL"], min_size=1, max_size=2)
    return _pool


def _schema() -> str:
    return '"' + os.environ.get("FERRY_SCHEMA", "ferry") + '"'


class CopyInput(BaseModel):
    page_size: int = 10


async def fetch_page(input: CopyInput, cursor: JsonValue) -> BackfillPage:
    db = await _db()
    await db.execute(
        f"INSERT INTO {_schema()}.page_fetches (cursor, pid) VALUES ($1, $2)", cursor, os.getpid()
    )
    rows = await db.fetch(
        f"SELECT id FROM {_schema()}.source WHERE id > $1 ORDER BY id LIMIT $2",
        cursor or 0,
        input.page_size,
    )
    ids = [row["id"] for row in rows]
    return BackfillPage(ids, ids[-1] if len(ids) == input.page_size else None)


async def copy_page(input: CopyInput, ids: Sequence[Any]) -> None:
    db = await _db()
    # Idempotent on purpose: a page whose checkpoint did not land is handed over again.
    await db.execute(
        f"INSERT INTO {_schema()}.target SELECT unnest($1::integer[]) ON CONFLICT DO NOTHING",
        list(ids),
    )
    await asyncio.sleep(float(os.environ.get("BACKFILL_PAGE_PAUSE", "0")))


async def count_source(input: CopyInput) -> int:
    db = await _db()
    count: int = await db.fetchval(f"SELECT count(*) FROM {_schema()}.source")
    return count


copy_rows = backfill(
    input=CopyInput,
    idempotency_key=lambda i: f"copy-rows:v1:{i.page_size}",
    page=fetch_page,
    handle=copy_page,
    total=count_source,
    name="backfill-test-copy-rows",
)
