"""Job drivers: where runs are stored. ``set_job_driver`` swaps them without touching jobs.

Each driver loads on first use (``ferry.drivers.postgres_job_driver`` imports asyncpg,
``ferry.drivers.sqlite_job_driver`` aiosqlite, ``ferry.drivers.redis_job_driver`` redis,
only when touched), so ``import ferry`` loads no database client. ``job_driver_from_url``
picks the driver a database URL names (what the CLI does with ``DATABASE_URL``).
``ferry.drivers.protocol`` is the driver protocol: the seam a driver implements and the
values that cross it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ferry.drivers.protocol import JobDriver, RunFilter

if TYPE_CHECKING:
    from ferry.drivers._memory import MemoryJobDriver, memory_job_driver
    from ferry.drivers._postgres import PostgresJobDriver, postgres_job_driver
    from ferry.drivers._redis import RedisJobDriver, redis_job_driver
    from ferry.drivers._sqlite import SqliteJobDriver, sqlite_job_driver
    from ferry.drivers._url import job_driver_from_url

_LAZY = {
    "MemoryJobDriver": "ferry.drivers._memory",
    "memory_job_driver": "ferry.drivers._memory",
    "PostgresJobDriver": "ferry.drivers._postgres",
    "postgres_job_driver": "ferry.drivers._postgres",
    "RedisJobDriver": "ferry.drivers._redis",
    "redis_job_driver": "ferry.drivers._redis",
    "SqliteJobDriver": "ferry.drivers._sqlite",
    "sqlite_job_driver": "ferry.drivers._sqlite",
    "job_driver_from_url": "ferry.drivers._url",
}


def __getattr__(name: str) -> Any:
    """Import a driver the first time its name is used."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ferry.drivers' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "JobDriver",
    "MemoryJobDriver",
    "PostgresJobDriver",
    "RedisJobDriver",
    "RunFilter",
    "SqliteJobDriver",
    "job_driver_from_url",
    "memory_job_driver",
    "postgres_job_driver",
    "redis_job_driver",
    "sqlite_job_driver",
]
