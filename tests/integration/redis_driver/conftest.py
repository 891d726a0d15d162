"""Fixtures for the Redis driver's own tests: a driver on the session's server under a
fresh prefix, a plain client to look at keys the way an operator would, and a private
server for the tests that restart or kill it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from redis.asyncio import Redis
from redis_server import RedisServer

from ferry._clock import FrozenClock
from ferry.drivers import RedisJobDriver, redis_job_driver


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
async def driver(
    redis_url: str, redis_prefix: str, clock: FrozenClock
) -> AsyncIterator[RedisJobDriver]:
    built = redis_job_driver(redis_url, prefix=redis_prefix, clock=clock)
    yield built
    await built.close()


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
