"""One URL, one driver: the scheme of a store's URL picks the driver that opens it."""

from __future__ import annotations

import re

from ferry._clock import Clock
from ferry.drivers.protocol import JobDriver
from ferry.errors import FerryError

POSTGRES_SCHEMES = ("postgresql", "postgres")
MEMORY_SCHEME = "memory"
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)


def job_driver_from_url(
    url: str, *, schema: str = "ferry", clock: Clock | None = None
) -> JobDriver:
    """The driver for ``url``, not yet connected: ``postgresql://`` (or ``postgres://``) is
    ``postgres_job_driver`` on ``schema``, ``memory://`` a fresh ``memory_job_driver``.
    Any other scheme is refused (``X_DB_URL_INVALID``) without echoing the URL."""
    match = _SCHEME.match(url)
    scheme = match.group(1).lower() if match else ""
    if scheme in POSTGRES_SCHEMES:
        from ferry.drivers._postgres import postgres_job_driver

        return postgres_job_driver(url, schema=schema, clock=clock)
    if scheme == MEMORY_SCHEME:
        from ferry.drivers._memory import memory_job_driver

        return memory_job_driver(clock=clock)
    raise FerryError(
        "X_DB_URL_INVALID",
        f'the store URL starts with "{scheme}://", which names no ferry driver'
        if scheme
        else "the store URL has no scheme (postgresql://…), so it names no ferry driver",
        "write postgresql://user:password@host:5432/database (or memory:// for a store that "
        "lives only in this process)",
    )
