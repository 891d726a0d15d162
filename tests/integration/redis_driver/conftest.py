"""Fixtures for the Redis driver's own tests: a Redis driver on the session's server under
the test's prefix (the shared ``redis_url``, ``redis_prefix`` and frozen ``clock``), a
plain client to look at keys the way an operator would, and a private server for the
tests that restart or kill it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from redis.asyncio import Redis
from support.drivers import built
from support.redis_server import RedisServer

from ferry._clock import FrozenClock
from ferry.drivers import RedisJobDriver, redis_job_driver


@pytest.fixture
async def driver(
    request: pytest.FixtureRequest, clock: FrozenClock
) -> AsyncIterator[RedisJobDriver]:
    """A Redis driver on the test's prefix and frozen clock."""
    async with built("redis", request, clock) as redis:
        assert isinstance(redis, RedisJobDriver)
        yield redis


@pytest.fixture
async def admin(redis_url: str) -> AsyncIterator[Redis]:
    """A plain client on the session's server."""
    client = Redis.from_url(redis_url, decode_responses=True)
    yield client
    await client.aclose()


@pytest.fixture
def private_server() -> Iterator[RedisServer]:
    """A server of this test's own (appendfsync always), to restart or kill at will."""
    server = RedisServer(appendfsync="always")
    server.start()
    yield server
    server.remove()


@pytest.fixture
async def private_driver(
    private_server: RedisServer, clock: FrozenClock
) -> AsyncIterator[RedisJobDriver]:
    """A Redis driver on the test's private server (the default prefix)."""
    driver = redis_job_driver(private_server.url, clock=clock)
    yield driver
    await driver.close()
