"""``ferry prune``: one maintenance round from the command line, reported kind by kind."""

from __future__ import annotations

from ferry._clock import FrozenClock
from ferry.drivers import postgres_job_driver
from ferry.drivers.protocol import AckOptions, ClaimOptions, EnqueueRequest, NackOptions

from .conftest import Ferry

_DAY_MS = 86_400_000


async def _ended_in_2020(dsn: str, schema: str) -> None:
    """A completed, a dead and a queued run, the first two ended long ago."""
    driver = postgres_job_driver(dsn, schema=schema, clock=FrozenClock(1_600_000_000_000))
    try:
        await driver.enqueue_many(
            [EnqueueRequest("old", "default", {}, key, max_attempts=1) for key in "abc"]
        )
        done, dead = await driver.claim(ClaimOptions("w", 30_000, limit=2))
        await driver.settle_many([(done.id, AckOptions("w")), (dead.id, NackOptions("w", "dead"))])
    finally:
        await driver.close()


async def test_prune_deletes_what_each_retention_lets_go_and_reports_it(
    ferry: Ferry, postgres_dsn: str, pg_schema: str
) -> None:
    await _ended_in_2020(postgres_dsn, pg_schema)
    result = ferry("prune", "--retain-dead", "forever", "--json")
    assert result.code == 0, result.stderr
    data = result.envelope["data"]
    assert data["pruned"] == {
        "completed": 1,
        "dead": 0,
        "slots": 0,
        "rates": 0,
        "outbox": 0,
        "webhookAttempts": 0,
        "records": 0,
    }
    assert data["retentionMs"] == {
        "completed": 7 * _DAY_MS,
        "dead": None,
        "outbox": 7 * _DAY_MS,
        "webhookAttempts": 30 * _DAY_MS,
    }
    listed = ferry("jobs", "ls", "--json").envelope["data"]["runs"]
    assert sorted(run["state"] for run in listed) == ["dead", "queued"]

    text = ferry("prune", "--retain-dead", "1d")
    assert text.code == 0 and "dead runs" in text.stdout and "1 d ago" in text.stdout


def test_a_retention_that_is_not_a_duration_is_refused_naming_its_flag(ferry: Ferry) -> None:
    result = ferry("prune", "--retain-completed", "soon", "--json")
    assert result.code == 1 and "Traceback" not in result.stderr
    [finding] = result.envelope["findings"]
    assert finding["code"] == "X_INVARIANT" and "--retain-completed" in finding["message"]
