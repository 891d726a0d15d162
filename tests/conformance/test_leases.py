"""LeaseStore on every driver: a keyed, expiring lease with a term that fences."""

from __future__ import annotations

import asyncio

from ferry.drivers.capabilities import LEASES, need
from ferry.drivers.protocol import JobDriver

START = 1_767_225_600_000
TTL = 30_000


async def test_of_many_nodes_racing_for_a_lapsed_lease_exactly_one_wins(driver: JobDriver) -> None:
    leases = need(driver, LEASES, by="the test")
    assert await leases.acquire("scheduler", "old", now_ms=START, ttl_ms=TTL)
    won = await asyncio.gather(  # concurrent statements, on separate pooled connections
        *(
            leases.acquire("scheduler", f"node-{n}", now_ms=START + TTL, ttl_ms=TTL)
            for n in range(6)
        )
    )
    winners = [lease for lease in won if lease is not None]
    assert len(winners) == 1
    read = await leases.read("scheduler", now_ms=START + TTL)
    assert read == winners[0] and read.acquired_at_ms == START + TTL and read.term == 2


async def test_renewal_keeps_the_term_and_first_instant_and_extends_the_expiry(
    driver: JobDriver,
) -> None:
    leases = need(driver, LEASES, by="the test")
    first = await leases.acquire("maintenance", "a", now_ms=START, ttl_ms=TTL)
    renewed = await leases.acquire("maintenance", "a", now_ms=START + 1_000, ttl_ms=TTL)
    assert first is not None and renewed is not None
    assert (renewed.term, renewed.acquired_at_ms) == (first.term, START)
    assert renewed.expires_at_ms == START + 1_000 + TTL
    assert await leases.acquire("maintenance", "b", now_ms=START + TTL, ttl_ms=TTL) is None
    assert await leases.read("maintenance", now_ms=START + 1_000 + TTL) is None, "lapsed"
    assert await leases.read("other", now_ms=START) is None


async def test_every_take_starts_a_greater_term_even_after_a_release(driver: JobDriver) -> None:
    leases = need(driver, LEASES, by="the test")
    terms = []
    for n, holder in enumerate(["a", "b", "a"]):
        taken = await leases.acquire("scheduler", holder, now_ms=START + n, ttl_ms=TTL)
        assert taken is not None and taken.holder == holder
        terms.append(taken.term)
        await leases.release("scheduler", "nobody")  # only the holder releases
        assert await leases.read("scheduler", now_ms=START + n) is not None
        await leases.release("scheduler", holder)
        assert await leases.read("scheduler", now_ms=START + n) is None
    assert terms == sorted(set(terms)), "strictly growing: a stale holder's term never returns"
