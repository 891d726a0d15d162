"""The ``ferry`` commands on a Redis URL: ``DATABASE_URL=redis://…`` picks the Redis driver,
``--schema`` (``FERRY_SCHEMA``) is its key prefix; run as real processes."""

from __future__ import annotations

from typing import Any

from support.processes import ferry_env, run_ferry

from ferry.drivers import RedisJobDriver
from ferry.drivers.protocol import EnqueueRequest


def ferry(redis_url: str, prefix: str, *args: str) -> tuple[int, dict[str, Any]]:
    """Run ``ferry <args> --json`` on the prefix: its exit code and envelope."""
    done = run_ferry(*args, "--json", env=ferry_env(redis_url, prefix))
    assert done.stdout, done.stderr
    return done.code, done.envelope


async def test_the_jobs_and_queues_commands_read_and_act_on_redis(
    driver: RedisJobDriver, redis_url: str
) -> None:
    run = await driver.enqueue(EnqueueRequest("send", "mail", {"to": "a"}, "k1", 3))
    code, listed = ferry(redis_url, driver.prefix, "jobs", "ls")
    assert code == 0, listed
    assert [r["id"] for r in listed["data"]["runs"]] == [run.job_id]
    code, paused = ferry(redis_url, driver.prefix, "queues", "pause", "mail")
    assert code == 0, paused
    assert [s.paused for s in await driver.stats()] == [True]
    code, cancelled = ferry(redis_url, driver.prefix, "jobs", "cancel", run.job_id)
    assert code == 0, cancelled
    detail = await driver.introspect.get_run(run.job_id)
    assert detail is not None and detail.summary.state == "cancelled"


async def test_migrate_and_doctor_on_redis(redis_url: str, redis_prefix: str) -> None:
    code, migrated = ferry(redis_url, redis_prefix, "migrate")
    assert code == 0 and migrated["data"]["applied"] == [9], "a new prefix gets its ledger"
    assert 'redis prefix "' in migrated["summary"], migrated
    code, again = ferry(redis_url, redis_prefix, "migrate")
    assert code == 0 and again["data"]["applied"] == [], again
    code, doctor = ferry(redis_url, redis_prefix, "doctor")
    assert code == 0, doctor
    assert not doctor.get("findings"), doctor
