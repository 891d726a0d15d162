"""A lease whose renewals stop landing — even by hanging, not failing — is reported."""

from __future__ import annotations

import asyncpg
from support.processes import Fleet
from support.waiting import eventually

from ferry.drivers import PostgresJobDriver

from . import app


async def test_a_hanging_heartbeat_raises_job_leases_lost_total_within_one_window(
    driver: PostgresJobDriver, db: asyncpg.Connection, fleet: Fleet, postgres_dsn: str
) -> None:
    schema = driver.schema
    worker = await fleet.worker(lease_seconds=2, extra=["--log-format", "json"])
    assert await worker.metric("job_leases_lost_total", queue="default") == 0, (
        "pre-initialised, so the first loss is an increase an alert sees"
    )
    run = await app.chain.enqueue({"key": "k", "step_ms": [60_000]})

    async def running() -> bool:
        return bool(await db.fetchval(f'SELECT count(*) FROM "{schema}".effects'))

    await eventually(running, within_s=20, what="the body to start")
    # A row lock held by another session: the heartbeat's UPDATE waits on it, unanswered,
    # exactly like a renewal stuck behind a stalled connection.
    blocker = await asyncpg.connect(postgres_dsn)
    transaction = blocker.transaction()
    await transaction.start()
    try:
        await blocker.execute(
            f'SELECT 1 FROM "{schema}".jobs WHERE id = $1 FOR UPDATE', int(run.job_id)
        )

        async def lease_lost() -> bool:
            return await worker.metric("job_leases_lost_total", queue="default") == 1

        await eventually(lease_lost, within_s=15, what="job_leases_lost_total to rise")
    finally:
        await transaction.rollback()
        await blocker.close()

    events = worker.records()
    lost = [e for e in events if e["event"] == "jobs.lease.lost"]
    assert lost and lost[0]["level"] == "error" and lost[0]["job_id"] == run.job_id
    failed = [e for e in events if e["event"] == "jobs.heartbeat.failed"]
    assert failed and failed[0]["level"] == "warning"
    assert (await worker.metric("job_heartbeat_failures_total", queue="default") or 0) >= 1
