"""Concurrency slots on Postgres: never more than ``limit`` live holders, across connections."""

from __future__ import annotations

import asyncio

from ferry._clock import FrozenClock
from ferry.drivers import PostgresJobDriver


async def _contend(driver: PostgresJobDriver, key: str, holders: list[str], limit: int) -> int:
    """Every holder tries at once, each on its own pooled connection; answers the winners."""
    won = await asyncio.gather(
        *(driver.slots.acquire(key, holder=h, limit=limit, ttl_ms=1_000) for h in holders)
    )
    return sum(won)


async def test_concurrent_acquires_never_exceed_the_limit_and_fill_it(
    driver: PostgresJobDriver,
) -> None:
    for round_ in range(5):
        key = f"acct:{round_}"
        assert await _contend(driver, key, [f"{round_}-{i}" for i in range(30)], limit=3) == 3
        assert len(await driver.slots.holders(key)) == 3


async def test_expired_slots_are_taken_over_by_exactly_limit_new_holders(
    driver: PostgresJobDriver, clock: FrozenClock
) -> None:
    assert await _contend(driver, "acct", [f"old-{i}" for i in range(10)], limit=2) == 2
    clock.advance("1s")
    assert await driver.slots.holders("acct") == []
    assert await _contend(driver, "acct", [f"new-{i}" for i in range(30)], limit=2) == 2
    holders = await driver.slots.holders("acct")
    assert len(holders) == 2 and all(h.startswith("new-") for h in holders)


async def test_reacquire_by_the_holder_is_idempotent_and_extends_it(
    driver: PostgresJobDriver, clock: FrozenClock
) -> None:
    assert await driver.slots.acquire("k", holder="a", limit=1, ttl_ms=1_000)
    clock.advance("900ms")
    assert await driver.slots.acquire("k", holder="a", limit=1, ttl_ms=1_000)
    assert not await driver.slots.acquire("k", holder="b", limit=1, ttl_ms=1_000)
    clock.advance("900ms")
    assert await driver.slots.holders("k") == ["a"]


async def test_a_lowered_limit_counts_every_live_holder(driver: PostgresJobDriver) -> None:
    for holder in ("a", "b", "c"):
        assert await driver.slots.acquire("k", holder=holder, limit=3, ttl_ms=1_000)
    await driver.slots.release("k", holder="a")
    assert not await driver.slots.acquire("k", holder="d", limit=2, ttl_ms=1_000)
    await driver.slots.release("k", holder="b")
    assert await driver.slots.acquire("k", holder="d", limit=2, ttl_ms=1_000)
    assert await driver.slots.holders("k") == ["c", "d"]
