"""The wake: a pub/sub session that starts idle workers when a run is enqueued, and heals
when it drops — the session killed, or the whole server restarted.

Every wait is bounded and asserts an event (a health change, a wake-up); the driver's
time moves only by ``clock.advance`` (the reconnect backoff included).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis_server import RedisServer
from wake_health import HealthLog

from ferry._clock import FrozenClock
from ferry.drivers import RedisJobDriver, redis_job_driver
from ferry.drivers._wake import IDLE_POLL_MAX_MS, IDLE_POLL_MAX_WAKE_PROVEN_MS, ChannelWake
from ferry.drivers.protocol import EnqueueRequest

T = TypeVar("T")


def send(key: str, run_at_ms: int | None = None) -> EnqueueRequest:
    return EnqueueRequest("send", "default", {"key": key}, key, 3, run_at_ms=run_at_ms)


async def _as_a_role_would(call: Callable[[], Awaitable[T]]) -> T:
    """``call()``, tried again after a connection error the way a role's loop does (the
    client does not retry a script itself: one whose reply was lost may have run)."""
    for _ in range(3):
        try:
            return await call()
        except RedisConnectionError:
            continue
    return await call()


async def _listening(driver: RedisJobDriver) -> tuple[ChannelWake, HealthLog]:
    """The driver's wake once it listens, its (re)subscribe's poll-once consumed."""
    wake = driver.wake()
    health = HealthLog(wake)
    assert await health.next() is True
    assert await wake.wait(0) is True
    return wake, health


async def _heals(wake: ChannelWake, health: HealthLog, clock: FrozenClock) -> None:
    """The session was lost: the wake says so, polls sooner, and once the reconnect backoff
    has passed on the clock it listens again and polls once."""
    assert await health.next() is False
    assert wake.idle_poll_ms == IDLE_POLL_MAX_MS  # poll sooner while deaf
    clock.advance("1s")  # past the reconnect backoff
    assert await health.next() is True
    assert await wake.wait(0) is True  # the resubscribe's own poll-once


async def test_an_enqueue_wakes_a_waiting_worker(driver: RedisJobDriver) -> None:
    wake, _ = await _listening(driver)
    assert driver.wake() is wake  # one session per driver
    assert wake.idle_poll_ms == IDLE_POLL_MAX_WAKE_PROVEN_MS
    waiter = asyncio.create_task(wake.wait(60_000))
    await driver.enqueue(send("wake-up"))
    assert await asyncio.wait_for(waiter, 10) is True


async def test_a_delayed_run_wakes_nobody_and_a_wake_is_kept_for_the_next_wait(
    driver: RedisJobDriver, clock: FrozenClock
) -> None:
    wake, _ = await _listening(driver)
    await driver.enqueue(send("later", run_at_ms=clock.now_ms() + 60_000))
    await driver.enqueue(send("now"))  # published after the delayed one's script ran
    assert await asyncio.wait_for(wake.wait(60_000), 10) is True
    assert await wake.wait(0) is False, "one wake-up, for the run due now"


async def test_the_runs_and_the_outbox_share_one_session(
    driver: RedisJobDriver, admin: Redis
) -> None:
    await _listening(driver)
    outbox = driver.outbox.wake()
    assert await asyncio.wait_for(outbox.wait(60_000), 10) is True  # its poll-once
    await driver.outbox.append("receipt", {"order": 1}, connection=None)
    assert await asyncio.wait_for(outbox.wait(60_000), 10) is True
    tag = "{" + driver.prefix + "}"
    subscribers = await admin.pubsub_numsub(f"{tag}:wake", f"{tag}:outbox:wake")
    assert [count for _, count in subscribers] == [1, 1]


async def test_the_wake_heals_after_its_session_is_killed(
    driver: RedisJobDriver, clock: FrozenClock, admin: Redis
) -> None:
    wake, health = await _listening(driver)
    assert await admin.client_kill_filter(_type="pubsub") >= 1
    await _heals(wake, health, clock)
    waiter = asyncio.create_task(wake.wait(60_000))
    await driver.enqueue(send("after-healing"))
    assert await asyncio.wait_for(waiter, 10) is True


async def test_the_wake_and_the_driver_outlive_a_server_restart(
    private_server: RedisServer, clock: FrozenClock
) -> None:
    driver = redis_job_driver(private_server.url, clock=clock)
    try:
        wake, health = await _listening(driver)
        first = await driver.enqueue(send("before"))
        await asyncio.to_thread(private_server.restart)
        await _heals(wake, health, clock)
        again = await _as_a_role_would(lambda: driver.enqueue(send("before")))
        assert (again.job_id, again.deduplicated) == (first.job_id, True), "the run survived"
    finally:
        await driver.close()
