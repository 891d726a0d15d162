"""ferry on its Redis driver: the same jobs and worker as ``ferry_system``, another store.

The orchestrator starts one ``redis-server`` (``bench.redis``) and names it in
``FERRY_BENCH_REDIS_URL``; each workload's fresh PostgreSQL database name becomes the key
prefix, so every workload starts on an empty key space as the SQL systems do.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from bench.systems.ferry_system import FerrySystem
from ferry.drivers import RedisJobDriver, redis_job_driver

REDIS_URL_VARIABLE = "FERRY_BENCH_REDIS_URL"


class FerryRedisSystem(FerrySystem):
    """ferry on ``redis_job_driver`` with its defaults (one client, pub/sub wake)."""

    name = "ferry-redis"

    def __init__(self) -> None:
        self._counting: dict[str, RedisJobDriver] = {}

    def driver(self, dsn: str) -> RedisJobDriver:
        prefix = urlsplit(dsn).path.strip("/")
        return redis_job_driver(os.environ[REDIS_URL_VARIABLE], prefix=prefix)

    async def unsettled(self, dsn: str) -> int:
        """Counted by ``stats()`` over one driver kept for the process (the drain polls
        this every few milliseconds)."""
        driver = self._counting.get(dsn)
        if driver is None:
            driver = self._counting[dsn] = self.driver(dsn)
        return sum(
            count
            for queue in await driver.stats()
            for state, count in queue.counts.items()
            if state != "completed"
        )


SYSTEM = FerryRedisSystem()
