"""One URL, one driver: the scheme of a store's URL picks the driver that opens it.

``postgresql://`` is the Postgres driver on ``schema``; ``redis://`` (``rediss://``,
``unix://``) the Redis driver with ``schema`` as its key prefix; ``memory://`` a fresh
memory driver. What ``DATABASE_URL`` (or ``--database-url``) says is all a command or role
needs to know.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TypeAlias

from ferry._clock import Clock
from ferry.drivers.protocol import JobDriver
from ferry.errors import FerryError

if TYPE_CHECKING:
    from ferry.drivers._postgres import PostgresJobDriver
    from ferry.drivers._redis import RedisJobDriver

DurableJobDriver: TypeAlias = "PostgresJobDriver | RedisJobDriver"

POSTGRES_SCHEMES = ("postgresql", "postgres")
REDIS_SCHEMES = ("redis", "rediss", "unix")
MEMORY_SCHEME = "memory"
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)


def scheme_of(url: str) -> str:
    """The URL's scheme, lower-cased (``""`` when it has none)."""
    match = _SCHEME.match(url)
    return match.group(1).lower() if match else ""


def job_driver_from_url(
    url: str, *, schema: str = "ferry", clock: Clock | None = None
) -> JobDriver:
    """The driver for ``url``, not yet connected: ``postgresql://`` (or ``postgres://``) is
    ``postgres_job_driver`` on ``schema``, ``redis://`` ``redis_job_driver`` with ``schema``
    as its key prefix, ``memory://`` a fresh ``memory_job_driver``. Any other scheme is
    refused (``X_DB_URL_INVALID``) without echoing the URL."""
    if scheme_of(url) == MEMORY_SCHEME:
        from ferry.drivers._memory import memory_job_driver

        return memory_job_driver(clock=clock)
    return durable_job_driver_from_url(url, schema=schema, clock=clock)


def durable_job_driver_from_url(
    url: str, *, schema: str = "ferry", clock: Clock | None = None
) -> DurableJobDriver:
    """``job_driver_from_url`` for a store that outlives the process (what every command
    and role runs on), typed as the drivers it can be."""
    scheme = scheme_of(url)
    if scheme in POSTGRES_SCHEMES:
        from ferry.drivers._postgres import postgres_job_driver

        return postgres_job_driver(url, schema=schema, clock=clock)
    if scheme in REDIS_SCHEMES:
        from ferry.drivers._redis import redis_job_driver

        return redis_job_driver(url, prefix=schema, clock=clock)
    raise FerryError(
        "X_DB_URL_INVALID",
        f'the store URL\'s scheme "{scheme}://" names no ferry driver'
        if scheme
        else "the store URL has no scheme (postgresql://…), so it names no ferry driver",
        "write postgresql://user:password@host:5432/database, redis://[:password@]host:6379/0 "
        "(or memory:// for a store that lives only in this process)",
    )
