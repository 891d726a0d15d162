"""RecordStore on every driver: keyed records (expiring, fenced) and keyed logs."""

from __future__ import annotations

from ferry._clock import FrozenClock
from ferry.drivers.capabilities import LEASES, RECORDS, need
from ferry.drivers.protocol import (
    ClaimOptions,
    EnqueueRequest,
    JobDriver,
    RetentionPolicy,
    RunFence,
)

TTL = 30_000


async def test_a_record_is_read_back_until_it_expires_or_is_deleted(
    driver: JobDriver, clock: FrozenClock
) -> None:
    records = need(driver, RECORDS, by="the test")
    now = clock.now_ms()
    assert await records.put("s", "a", {"n": [1, None, "x"]}, now_ms=now)
    assert await records.put("s", "b", 2, now_ms=now, expires_at_ms=now + 1_000)
    assert await records.put("t", "a", True, now_ms=now)
    assert await records.get("s", "a", now_ms=now) == {"n": [1, None, "x"]}
    assert await records.scan("s", now_ms=now) == {"a": {"n": [1, None, "x"]}, "b": 2}
    assert await records.put("s", "a", 3, now_ms=now), "a put replaces"
    assert await records.get("s", "a", now_ms=now) == 3
    assert await records.scan("s", now_ms=now + 1_000) == {"a": 3}, "b expired"
    await records.delete("s", "a")
    await records.delete("s", "never")
    assert await records.get("s", "a", now_ms=now) is None
    assert await records.scan("t", now_ms=now) == {"a": True}


async def test_a_put_fenced_on_a_lease_lands_only_within_its_term(
    driver: JobDriver, clock: FrozenClock
) -> None:
    leases, records = need(driver, LEASES, by="the test"), need(driver, RECORDS, by="the test")
    now = clock.now_ms()
    lease = await leases.acquire("scheduler", "a", now_ms=now, ttl_ms=TTL)
    assert lease is not None
    assert await records.put("ticks", "t", 1, now_ms=now, fence=lease)
    assert not await records.put("ticks", "t", 2, now_ms=now + TTL, fence=lease), "lapsed"
    taken = await leases.acquire("scheduler", "b", now_ms=now + TTL, ttl_ms=TTL)
    assert taken is not None
    again = await leases.acquire("scheduler", "a", now_ms=now + 2 * TTL, ttl_ms=TTL)
    assert again is not None and again.term > lease.term
    assert not await records.put("ticks", "t", 3, now_ms=now + 2 * TTL, fence=lease), "old term"
    assert await records.put("ticks", "t", 4, now_ms=now + 2 * TTL, fence=again)
    assert await records.get("ticks", "t", now_ms=now) == 4


async def test_a_put_fenced_on_a_run_lands_only_while_its_worker_holds_it(
    driver: JobDriver, clock: FrozenClock
) -> None:
    records = need(driver, RECORDS, by="the test")
    request = EnqueueRequest(name="j", queue="q", payload={}, idempotency_key="k", max_attempts=3)
    job_id = (await driver.enqueue(request)).job_id
    now = clock.now_ms()
    assert not await records.put("b", "k", 1, now_ms=now, fence=RunFence(job_id, "w")), "queued"
    [claimed] = await driver.claim(ClaimOptions(worker_id="w", lease_ms=TTL))
    assert await records.put("b", "k", 1, now_ms=now, fence=RunFence(claimed.id, "w"))
    assert not await records.put("b", "k", 2, now_ms=now, fence=RunFence(claimed.id, "other"))
    assert not await records.put("b", "k", 2, now_ms=now, fence=RunFence("nope", "w"))
    assert await records.get("b", "k", now_ms=now) == 1


async def test_a_log_reads_newest_first_and_old_entries_and_expired_records_are_pruned(
    driver: JobDriver, clock: FrozenClock
) -> None:
    records = need(driver, RECORDS, by="the test")
    for n in range(5):
        await records.append("log", "e1", {"n": n}, at_ms=clock.now_ms())
        clock.advance("1d")
    await records.append("log", "e2", "other", at_ms=clock.now_ms())
    await records.put("s", "gone", 1, now_ms=clock.now_ms(), expires_at_ms=clock.now_ms() + 1)
    assert await records.tail("log", "e1", limit=3) == [{"n": 4}, {"n": 3}, {"n": 2}]
    assert await records.tail("log", "e1", limit=0) == []
    clock.advance("1ms")
    policy = RetentionPolicy(None, None, None, webhook_attempts_ms=3 * 86_400_000, batch=2)
    report = await driver.prune(policy)
    assert (report.webhook_attempts, report.records) == (3, 1), "stamped 3 days ago or more"
    assert await records.tail("log", "e1", limit=10) == [{"n": 4}, {"n": 3}]
    assert await records.tail("log", "e2", limit=10) == ["other"]
