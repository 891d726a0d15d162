"""SlotStore: fleet-wide concurrency slots."""

from __future__ import annotations

from ferry._clock import FrozenClock
from ferry.drivers.protocol import JobDriver


async def test_a_key_never_has_more_holders_than_its_limit(driver: JobDriver) -> None:
    leases = driver.slots
    assert leases is not None
    assert await leases.acquire("k", holder="1", limit=2, ttl_ms=1_000)
    assert await leases.acquire("k", holder="2", limit=2, ttl_ms=1_000)
    assert not await leases.acquire("k", holder="3", limit=2, ttl_ms=1_000)
    assert await leases.acquire("k", holder="1", limit=2, ttl_ms=1_000), "re-acquire holds"
    assert sorted(await leases.holders("k")) == ["1", "2"]
    await leases.release("k", holder="1")
    assert await leases.acquire("k", holder="3", limit=2, ttl_ms=1_000)


async def test_an_expired_slot_is_free_again(driver: JobDriver, clock: FrozenClock) -> None:
    leases = driver.slots
    assert leases is not None
    assert await leases.acquire("k", holder="1", limit=1, ttl_ms=1_000)
    clock.advance("1s")
    assert await leases.holders("k") == []
    assert await leases.acquire("k", holder="2", limit=1, ttl_ms=1_000)


async def test_holders_are_listed_in_code_point_order(driver: JobDriver) -> None:
    """Whatever the server's collation: Postgres, SQLite and Redis alike."""
    leases = driver.slots
    assert leases is not None
    holders = ["b", "é", "B", "a10", "a9", "_"]
    for holder in holders:
        assert await leases.acquire("k", holder=holder, limit=len(holders), ttl_ms=1_000)
    assert await leases.holders("k") == sorted(holders)
