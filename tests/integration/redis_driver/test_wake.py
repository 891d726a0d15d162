"""The wake: a pub/sub session that starts idle workers when a run is enqueued, and heals
when it drops — the session killed, or the whole server restarted.

Every wait is bounded and asserts an event (a health change, a wake-up); the driver's
time moves only by ``clock.advance`` (the reconnect backoff included).
"""

from __future__ import annotations

import asyncio
from typing import TypeVar

from redis.asyncio import Redis
from support.redis_server import RedisServer, as_a_role_would
from support.runs import send
from support.wake import HealthLog, listening, woken_by

from ferry._clock import FrozenClock
from ferry.drivers import RedisJobDriver
from ferry.drivers._wake import IDLE_POLL_MAX_MS, IDLE_POLL_MAX_WAKE_PROVEN_MS, ChannelWake

T = TypeVar("T")


async def _heals(wake: ChannelWake, health: HealthLog, clock: FrozenClock) -> None:
    """The session was lost: the wake says so, polls sooner, and once the reconnect backoff
    has passed on the clock it listens again and polls once."""
    assert await health.next() is False
    assert wake.idle_poll_ms == IDLE_POLL_MAX_MS  # poll sooner while deaf
    clock.advance("1s")  # past the reconnect backoff
    assert await health.next() is True
    assert await wake.wait(0) is True  # the resubscribe's own poll-once


async def test_an_enqueue_wakes_a_waiting_worker(driver: RedisJobDriver) -> None:
    wake, _ = await listening(driver)
    assert driver.wake() is wake  # one session per driver
    assert wake.idle_poll_ms == IDLE_POLL_MAX_WAKE_PROVEN_MS
    assert await woken_by(wake, driver.enqueue(send("wake-up")))


async def test_a_delayed_run_wakes_nobody_and_a_wake_is_kept_for_the_next_wait(
    driver: RedisJobDriver, clock: FrozenClock
) -> None:
    wake, _ = await listening(driver)
    await driver.enqueue(send("later", run_at_ms=clock.now_ms() + 60_000))
    await driver.enqueue(send("now"))  # published after the delayed one's script ran
    assert await asyncio.wait_for(wake.wait(60_000), 10) is True
    assert await wake.wait(0) is False, "one wake-up, for the run due now"


async def test_the_runs_and_the_outbox_share_one_session(
    driver: RedisJobDriver, admin: Redis
) -> None:
    await listening(driver)
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
    wake, health = await listening(driver)
    assert await admin.client_kill_filter(_type="pubsub") >= 1
    await _heals(wake, health, clock)
    assert await woken_by(wake, driver.enqueue(send("after-healing")))


async def test_the_wake_and_the_driver_outlive_a_server_restart(
    private_server: RedisServer, private_driver: RedisJobDriver, clock: FrozenClock
) -> None:
    wake, health = await listening(private_driver)
    first = await private_driver.enqueue(send("before"))
    await asyncio.to_thread(private_server.restart)
    await _heals(wake, health, clock)
    again = await as_a_role_would(lambda: private_driver.enqueue(send("before")))
    assert (again.job_id, again.deduplicated) == (first.job_id, True), "the run survived"
