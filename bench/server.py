"""The one local PostgreSQL every system runs against, and fresh databases on it."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import asyncpg


@dataclass(frozen=True)
class Server:
    """A running PostgreSQL server: where it is and how it is configured."""

    dsn: str
    where: str
    version: str
    fsync: str
    synchronous_commit: str


@contextmanager
def local_server() -> Iterator[str]:
    """``DATABASE_URL`` when set, else an embedded ``pgserver`` in a temp dir (deleted after)."""
    configured = os.environ.get("DATABASE_URL")
    if configured:
        yield configured
        return
    import pgserver

    data_dir = tempfile.mkdtemp(prefix="ferry-bench-pg-")
    server = pgserver.get_server(data_dir, cleanup_mode="delete")  # type: ignore[attr-defined]
    try:
        yield str(server.get_uri())
    finally:
        server.cleanup()


async def describe(dsn: str) -> Server:
    """The server's version and durability settings, as the table header reports them."""
    connection = await asyncpg.connect(dsn)
    try:
        version = await connection.fetchval("SHOW server_version")
        fsync = await connection.fetchval("SHOW fsync")
        synchronous_commit = await connection.fetchval("SHOW synchronous_commit")
    finally:
        await connection.close()
    where = "DATABASE_URL" if os.environ.get("DATABASE_URL") else "embedded pgserver"
    return Server(dsn, where, f"PostgreSQL {version}", fsync, synchronous_commit)


def database_dsn(dsn: str, database: str) -> str:
    """``dsn`` pointed at ``database`` on the same server (host, user and options kept)."""
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path=f"/{database}"))


@asynccontextmanager
async def fresh_database(dsn: str, label: str) -> AsyncIterator[str]:
    """A new, empty database for one system's workload; dropped afterwards."""
    name = f"bench_{label}_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield database_dsn(dsn, name)
    finally:
        admin = await asyncpg.connect(dsn)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
