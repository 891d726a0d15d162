"""Fill a store the way ferry 0.1.0 (commit fbb8283) writes it — run with that release's
``runtime`` first on ``PYTHONPATH`` (``scripts/upgrade/record.py`` does).

It uses only that release's driver API, on a frozen clock at ``T0``, so the stores it
leaves are deterministic: a queued, a sleeping, a running and a dead run (with steps and
an error), a concurrency slot and the maintenance slot, the scheduler's leader row, a
tick and a paused task, outbox entries (one published), the webhook ledger (a streak, a
disabled endpoint, and one disabled with no attempt logged), a backfill checkpoint and a
revoked dashboard session.

    python build_old_stores.py postgres <dsn> <schema>
    python build_old_stores.py sqlite <path>
    python build_old_stores.py redis <url> <prefix>
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from ferry._clock import FrozenClock
from ferry.drivers import postgres_job_driver, redis_job_driver, sqlite_job_driver
from ferry.drivers.protocol import (
    AckOptions,
    BackfillCheckpoint,
    ClaimOptions,
    EnqueueRequest,
    JobError,
    NackOptions,
    StepRecord,
    TaskTick,
    WebhookAttempt,
)

T0 = 1_767_225_600_000
HOUR = 3_600_000


def run(key: str, name: str, **extra: Any) -> EnqueueRequest:
    return EnqueueRequest(
        name=name,
        queue="upgrade",
        payload={"key": key},
        idempotency_key=key,
        max_attempts=5,
        **extra,
    )


def claim(name: str) -> ClaimOptions:
    return ClaimOptions(worker_id="w-old", lease_ms=HOUR, limit=1, names=[name])


def attempt(endpoint: str, n: int, outcome: str) -> WebhookAttempt:
    return WebhookAttempt(
        webhook="partner.hooks",
        endpoint_id=endpoint,
        event_id=f"ev-{n}",
        message_id=f"ev-{n}",
        job_id=str(100 + n),
        attempt=n,
        outcome=outcome,  # type: ignore[arg-type]
        status=500 if outcome == "failed" else 200,
        code="X_WEBHOOK_DELIVERY_FAILED" if outcome == "failed" else None,
        message="HTTP 500" if outcome == "failed" else None,
        duration_ms=12 + n,
        at_ms=T0 + n,
    )


async def fill(driver: Any, append: Any) -> None:
    clock = driver.clock
    await driver.enqueue(run("queued-1", "upgrade.later", run_at_ms=T0 + HOUR, priority=3))
    for key in ("sleeping-1", "running-1", "dead-1", "done-1"):
        await driver.enqueue(run(key, f"upgrade.{key.split('-')[0]}", tenant="acme"))
    step = StepRecord("provision", "run", {"org": 7}, T0, T0 + 5)

    [sleeping] = await driver.claim(claim("upgrade.sleeping"))
    assert await driver.steps.record(sleeping.id, step, worker_id="w-old")
    nap = StepRecord("cool-off", "sleep", None, T0 + 5, T0 + 6, wake_at_ms=T0 + 3 * HOUR)
    assert await driver.steps.record(sleeping.id, nap, worker_id="w-old")
    sleep = NackOptions("w-old", "sleep", run_at_ms=T0 + 3 * HOUR)
    assert await driver.nack(sleeping.id, sleep)

    [running] = await driver.claim(claim("upgrade.running"))
    assert await driver.steps.record(running.id, step, worker_id="w-old")
    assert await driver.leases.acquire("acct:1", holder=running.id, limit=1, ttl_ms=HOUR)
    checkpoint = BackfillCheckpoint("copy:1", {"after": 250}, 250, 5, False, T0)
    assert await driver.backfills.save(checkpoint, job_id=running.id, worker_id="w-old")

    [dead] = await driver.claim(claim("upgrade.dead"))
    assert await driver.steps.record(dead.id, step, worker_id="w-old")
    failure = JobError("X_BOOM", "it broke")
    assert await driver.nack(dead.id, NackOptions("w-old", "dead", error=failure))

    [done] = await driver.claim(claim("upgrade.done"))
    assert await driver.ack(done.id, AckOptions("w-old", result={"ok": True}))

    assert await driver.leases.acquire(" maintenance", holder="maint-1", limit=1, ttl_ms=HOUR)
    scheduler = driver.scheduler
    assert await scheduler.acquire_leadership("sched-a", now_ms=T0, ttl_ms=HOUR)
    tick = TaskTick("nightly", T0 - 10, T0 - 3 * HOUR, T0 - 3 * HOUR + 250)
    assert await scheduler.record_tick(tick, holder="sched-a", now_ms=T0)
    await scheduler.pause_task("weekly", now_ms=T0 - 1)

    for n, entry in enumerate(["receipt", "invoice"]):
        await append(entry, {"n": n})
    [first, _] = await driver.outbox.claim(relay_id="relay", lease_ms=HOUR, limit=2)
    assert await driver.outbox.mark_published([first.id], relay_id="relay") == [first.id]

    for n, outcome in enumerate(["delivered", "failed", "failed", "failed"], start=1):
        await driver.webhooks.record(attempt("ep-1", n, outcome))
    await driver.webhooks.disable("ep-1", reason="3 consecutive failures", at_ms=T0 + 9)
    await driver.webhooks.record(attempt("ep-2", 9, "delivered"))
    # Disabled with no attempt logged (by an operator): its disablement alone must carry over.
    await driver.webhooks.disable("ep-3", reason="disabled by an operator", at_ms=T0 + 10)
    await driver.introspect.revoke_session("sess-1", until_ms=T0 + 12 * HOUR)
    assert clock.now_ms() == T0


async def main(kind: str, *where: str) -> None:
    clock = FrozenClock(T0)
    if kind == "postgres":
        import asyncpg

        driver = postgres_job_driver(where[0], schema=where[1], clock=clock)

        async def append(type: str, payload: Any) -> None:
            connection = await asyncpg.connect(where[0])
            async with connection.transaction():
                await driver.outbox.append(type, payload, connection=connection)
            await connection.close()

    elif kind == "sqlite":
        import aiosqlite

        driver = sqlite_job_driver(where[0], clock=clock)
        await driver.open()

        async def append(type: str, payload: Any) -> None:
            async with aiosqlite.connect(where[0]) as connection:
                await connection.execute("BEGIN IMMEDIATE")
                await driver.outbox.append(type, payload, connection=connection)
                await connection.commit()

    else:
        driver = redis_job_driver(where[0], prefix=where[1], clock=clock)

        async def append(type: str, payload: Any) -> None:
            await driver.outbox.append(type, payload, connection=None)

    try:
        await fill(driver, append)
    finally:
        await driver.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
