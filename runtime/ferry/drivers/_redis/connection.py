"""The driver's Redis client: opened on first use, refused in words, closed only if owned.

Scripts are never retried by the client: a script whose reply was lost may have run, and a
blind re-run of a claim would lease runs nobody works on until their lease lapses. A
command that fails raises, and the role that sent it retries on its own schedule (the
worker's claim loop, the scheduler's round, the relay's poll), reading the stored state
afresh.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import urlsplit

from redis.asyncio import Redis
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from ferry._aio import cancellable
from ferry._clock import Clock
from ferry.drivers._redis.keyspace import Keyspace, client_location, store_location
from ferry.drivers._redis.migrate import apply_migrations
from ferry.drivers._redis.scripts import Scripts
from ferry.drivers._urls import redacted, scrubbed
from ferry.errors import FerryError

logger = logging.getLogger("ferry.drivers.redis")

_UNREACHABLE = (OSError, RedisConnectionError, RedisTimeoutError, ResponseError)
"""What opening can fail with when the server is not usable (refused, down, loading, a
wrong password — AuthenticationError is a ConnectionError —, a database index it lacks)."""


class Connection:
    """One client for every store of a driver, and its scripts."""

    def __init__(self, target: str | Redis, *, keys: Keyspace, clock: Clock) -> None:
        self.keys = keys
        self.clock = clock
        self._url = target if isinstance(target, str) else None
        self._client: Redis | None = None if isinstance(target, str) else _borrowed(target)
        self._owned = isinstance(target, str)
        self._scripts: Scripts | None = None
        self._opening = asyncio.Lock()
        self._closed = False

    async def client(self) -> Redis:
        """The open client (opening it on first use)."""
        await self._opened()
        assert self._client is not None
        return self._client

    async def run(self, name: str, *args: str | int) -> Any:
        """Run the named script of ``lua/`` with ``args``."""
        scripts = await self._opened()
        return await cancellable(scripts.run(name, *args))

    async def _opened(self) -> Scripts:
        """The scripts of the open connection (opening it on first use)."""
        if self._scripts is None:
            await cancellable(self.open())
        assert self._scripts is not None
        return self._scripts

    async def open(self) -> None:
        """Connect (once), check the server answers and apply pending keyspace migrations;
        refuses an unusable server or a keyspace this ferry must not use."""
        self.check_open()
        async with self._opening:
            if self._scripts is not None:
                return
            client = await self.reached()
            await apply_migrations(client, self.keys, self.clock)
            self._scripts = Scripts(client, self.keys.tag)
            await _warn_unless_durable(client)

    async def reached(self) -> Redis:
        """The client, once it answered a ping — nothing applied through it yet (what
        ``ferry doctor`` reads with); refuses an unreachable server."""
        self.check_open()
        client = self._client or _client_for(self._url or "")
        try:
            await client.ping()
        except _UNREACHABLE as error:
            if self._owned:
                await client.aclose()
            where = f" at {redacted(self._url)}" if self._url else ""
            raise FerryError(
                "X_DB_UNREACHABLE",
                f"cannot connect to redis{where}: "
                f"{type(error).__name__}: {scrubbed(str(error), self._url)}",
                "check DATABASE_URL (or --database-url): the host and port, that "
                "redis-server is up and reachable from here, the password and the "
                "database number",
            ) from None
        self._client = client
        return client

    async def command(self, *command: str) -> Any:
        """One command's answer (text: the client has ``decode_responses=True``). Like
        every command the stores send, it passes ``cancellable`` (in ``commands``): a cancel
        redis-py drops (``ferry._aio.cancellable``) still stops the role that sent it."""
        [answer] = await self.commands(command)
        return answer

    async def commands(self, *commands: tuple[str, ...]) -> list[Any]:
        """Commands in one round trip, in order (pipelined, no transaction)."""
        async with (await self.client()).pipeline(transaction=False) as pipe:
            for command in commands:
                pipe.execute_command(*command)
            return await cancellable(pipe.execute())

    @property
    def location(self) -> str:
        """Where the runs live, credential-free (``JobDriver.location``)."""
        if self._url is not None:
            return store_location(self._url, self.keys.prefix)
        assert self._client is not None
        return client_location(self._client.connection_pool.connection_kwargs, self.keys.prefix)

    def check_open(self) -> None:
        """Refuse use after ``close``."""
        if self._closed:
            raise FerryError(
                "X_DRIVER_CLOSED",
                "the redis job driver was used after close()",
                "create a new driver, or close it only at shutdown",
            )

    async def close(self) -> None:
        """Hand the client back: closed when the driver made it, left open when borrowed."""
        self._closed = True
        if self._owned and self._client is not None:
            await self._client.aclose()


def _client_for(url: str) -> Redis:
    try:
        parts = urlsplit(url)
        database = parts.path.strip("/")
        if parts.scheme != "unix" and database and not database.isdigit():
            # redis-py would quietly use database 0 instead.
            raise ValueError(f"its database {database!r} is not a number")
        return Redis.from_url(url, decode_responses=True, retry=Retry(NoBackoff(), 0))
    except ValueError as error:
        raise FerryError(
            "X_DB_URL_INVALID",
            f"the redis URL {redacted(url)} cannot be read: {scrubbed(str(error), url)}",
            "write it as redis://[:password@]host:6379/0 (rediss:// for TLS, "
            "unix:///path/to/redis.sock for a socket), in DATABASE_URL or --database-url",
        ) from None


def _borrowed(client: Redis) -> Redis:
    """A client the caller made, if it answers text (the driver reads replies as ``str``)."""
    if not client.connection_pool.connection_kwargs.get("decode_responses"):
        raise FerryError(
            "X_INVARIANT",
            "redis_job_driver() was given a redis client that answers bytes",
            "create it with decode_responses=True, or pass the URL and let the driver own it",
        )
    return client


async def _warn_unless_durable(client: Redis) -> None:
    """Say so at start when the server would lose runs: no AOF, or an eviction policy that
    may delete any key under memory pressure. (Managed servers that refuse CONFIG are not
    second-guessed.)"""
    try:
        settings = await client.config_get("appendonly")
        settings.update(await client.config_get("maxmemory-policy"))
    except ResponseError:
        return
    if settings.get("appendonly") != "yes":
        logger.warning(
            "jobs.redis.not-durable",
            extra={
                "reason": "appendonly is off: a restart loses every run since the last "
                "snapshot; set appendonly yes (docs/drivers.md)"
            },
        )
    policy = settings.get("maxmemory-policy")
    if policy not in (None, "noeviction"):
        logger.warning(
            "jobs.redis.not-durable",
            extra={
                "reason": f"maxmemory-policy is {policy}: under memory pressure redis "
                "deletes runs; set maxmemory-policy noeviction (docs/drivers.md)"
            },
        )
