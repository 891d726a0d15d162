"""ferry on its Redis driver: the same system as ``ferry``, on a key prefix per fresh
database.

The orchestrator starts one ``redis-server`` (``bench.redis``) and names it in
``FERRY_BENCH_REDIS_URL``; each workload's fresh PostgreSQL database name becomes the key
prefix, so every workload starts on an empty key space as the SQL systems do.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from bench.systems import Counter
from bench.systems.ferry_system import FerrySystem, StatsCounter
from ferry.drivers import redis_job_driver
from ferry.drivers.protocol import JobDriver

REDIS_URL_VARIABLE = "FERRY_BENCH_REDIS_URL"


def _build(dsn: str) -> JobDriver:
    prefix = urlsplit(dsn).path.strip("/")
    return redis_job_driver(os.environ[REDIS_URL_VARIABLE], prefix=prefix)


async def _counter(dsn: str) -> Counter:
    return StatsCounter(_build(dsn))


SYSTEM = FerrySystem(
    "ferry-redis", _build, _counter, "redis_job_driver(url) (one client, pub/sub wake)"
)
