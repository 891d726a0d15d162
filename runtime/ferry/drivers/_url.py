"""From a database URL to its driver: the one place a URL's scheme picks a driver.

Every command and role (``DATABASE_URL``, ``--database-url``/``--db``) and any application
that configures ferry from a URL resolves it here, so a scheme is added in one place: an
entry in ``BACKENDS`` naming how to build the driver and, optionally, how to word the
driver's own connection failures at the CLI's error boundary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ferry._clock import Clock
from ferry._payload import DEFAULT_MAX_PAYLOAD_BYTES
from ferry.drivers.protocol import JobDriver
from ferry.errors import FerryError


@dataclass(frozen=True, slots=True)
class DriverOptions:
    """What a URL does not say: the settings every driver built from one may take."""

    schema: str = "ferry"
    """The Postgres schema, or the Redis key prefix (SQLite and memory ignore it)."""
    clock: Clock | None = None
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES


Refusal = Callable[[BaseException, str | None], FerryError | None]


@dataclass(frozen=True, slots=True)
class Backend:
    """How the driver of one URL scheme is built, and how its connection failures read."""

    build: Callable[[str, DriverOptions], JobDriver]
    refusal: Refusal | None = None
    """The refusal a stray client exception stands for (None: the driver words its own)."""


def _postgres(url: str, options: DriverOptions) -> JobDriver:
    from ferry.drivers._postgres import postgres_job_driver

    return postgres_job_driver(
        url, schema=options.schema, clock=options.clock, max_payload_bytes=options.max_payload_bytes
    )


def _postgres_refusal(error: BaseException, url: str | None) -> FerryError | None:
    from ferry.drivers._postgres.reach import refusal_for

    return refusal_for(error, url)


def _memory(url: str, options: DriverOptions) -> JobDriver:
    from ferry.drivers._memory import memory_job_driver

    return memory_job_driver(clock=options.clock, max_payload_bytes=options.max_payload_bytes)


def _sqlite(url: str, options: DriverOptions) -> JobDriver:
    from ferry.drivers._sqlite import sqlite_job_driver

    return sqlite_job_driver(url, clock=options.clock, max_payload_bytes=options.max_payload_bytes)


def _redis(url: str, options: DriverOptions) -> JobDriver:
    from ferry.drivers._redis import redis_job_driver

    return redis_job_driver(
        url, prefix=options.schema, clock=options.clock, max_payload_bytes=options.max_payload_bytes
    )


BACKENDS: dict[str, Backend] = {
    "postgresql": Backend(_postgres, _postgres_refusal),
    "postgres": Backend(_postgres, _postgres_refusal),
    "sqlite": Backend(_sqlite),
    "redis": Backend(_redis),
    "rediss": Backend(_redis),
    "unix": Backend(_redis),
    "memory": Backend(_memory),
}
"""URL scheme -> its driver."""


def job_driver_from_url(
    url: str,
    *,
    schema: str = "ferry",
    clock: Clock | None = None,
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
) -> JobDriver:
    """The driver ``url`` names, not yet connected: ``postgresql://…`` (or ``postgres://``)
    for ``postgres_job_driver`` on ``schema``, ``sqlite:///relative.db`` or
    ``sqlite:////absolute.db`` for ``sqlite_job_driver``, ``redis://`` (``rediss://`` for
    TLS, ``unix://`` for a socket) for ``redis_job_driver`` with ``schema`` as its key
    prefix, ``memory://`` for a fresh
    ``memory_job_driver`` (a store that lives only in this process). Any other scheme is
    refused (``X_DB_URL_INVALID``) naming the ones ferry serves, never echoing the URL."""
    backend = BACKENDS.get(_scheme(url))
    if backend is None:
        raise FerryError(
            "X_DB_URL_INVALID",
            f'the database URL\'s scheme "{_scheme(url)}://" is not one a ferry driver serves'
            if _scheme(url)
            else "the database URL has no scheme (postgresql://…), so it names no ferry driver",
            "use postgresql://user:password@host:5432/database, sqlite:///path.db for a "
            "SQLite file on this machine, or redis://[:password@]host:6379/0 (memory:// for "
            "a store that lives only in this process)",
        )
    return backend.build(url, DriverOptions(schema, clock, max_payload_bytes))


def connection_refusal(error: BaseException, url: str | None) -> FerryError | None:
    """The refusal ``error`` stands for when it escaped a command on ``url`` (no URL: read
    as a Postgres failure, the default driver), or None when it is a bug to show whole."""
    if url is None:
        return _postgres_refusal(error, None)
    backend = BACKENDS.get(_scheme(url))
    if backend is None or backend.refusal is None:
        return None
    return backend.refusal(error, url)


@contextmanager
def connection_refusals(url: str | None) -> Iterator[None]:
    """Raise, instead of whatever escapes the block, the refusal it stands for on ``url``
    (``connection_refusal``); a ``FerryError`` or a bug passes through as it is."""
    try:
        yield
    except FerryError:
        raise
    except Exception as error:
        refusal = connection_refusal(error, url)
        if refusal is None:
            raise
        raise refusal from None


def _scheme(url: str) -> str:
    scheme, colon, _ = url.partition(":")
    return scheme.lower() if colon else ""
