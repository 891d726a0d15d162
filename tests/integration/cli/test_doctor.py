"""``ferry doctor`` as a real process: each failing check is a finding with its code."""

from __future__ import annotations

from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import ClaimOptions

from .conftest import Ferry, cli_env, golden


async def test_doctor_passes_every_check_on_a_healthy_schema(
    ferry: Ferry, seeded: PostgresJobDriver
) -> None:
    result = ferry("doctor", "--json")
    assert result.code == 0, result.stdout + result.stderr
    checks = {c["name"]: c for c in result.envelope["data"]["checks"]}
    assert set(checks) == {
        "database",
        "migrations",
        "scheduler leader",
        "stuck leases",
        "capabilities",
        "clock skew",
    }
    assert all(c["ok"] for c in checks.values())
    golden("doctor", result.envelope)
    offered = [
        "slots",
        "rates",
        "leases",
        "records",
        "outbox",
        "transfer",
        "introspect",
        "results",
        "children",
    ]
    assert result.envelope["data"]["capabilities"] == offered
    assert checks["capabilities"]["detail"] == ", ".join(offered)
    assert "clock skew" in ferry("doctor").stdout


async def test_doctor_reports_a_running_run_whose_lease_lapsed_as_stuck(
    ferry: Ferry, seeded: PostgresJobDriver
) -> None:
    # Claimed on the seed's frozen clock (2026-01-01): long lapsed on the doctor's clock.
    [claimed] = await seeded.claim(ClaimOptions("gone-worker", 30_000, 1))
    result = ferry("doctor", "--json")
    assert result.code == 1
    [finding] = result.envelope["findings"]
    assert finding["code"] == "X_STUCK_LEASES"
    assert claimed.id in finding["message"]


async def test_doctor_reports_pending_migrations_without_applying_them(
    ferry: Ferry, postgres_dsn: str, pg_schema: str
) -> None:
    for _ in range(2):  # the second run sees the same: the doctor changed nothing
        result = ferry("doctor", "--json")
        assert result.code == 1
        assert [f["code"] for f in result.envelope["findings"]] == ["X_MIGRATIONS_PENDING"]
    assert ferry("migrate", "--json").code == 0
    assert ferry("doctor", "--json").code == 0


async def test_doctor_reports_an_unreachable_database(
    ferry: Ferry, postgres_dsn: str, pg_schema: str
) -> None:
    env = cli_env(postgres_dsn, pg_schema)
    env["DATABASE_URL"] = "postgresql://nobody@127.0.0.1:1/none"
    result = ferry("doctor", "--json", env=env)
    assert result.code == 1
    assert [f["code"] for f in result.envelope["findings"]] == ["X_DB_UNREACHABLE"]


async def test_doctor_names_the_scheduler_leader_and_reports_when_none_leads(
    ferry: Ferry, seeded: PostgresJobDriver, postgres_dsn: str, pg_schema: str
) -> None:
    from ferry._clock import SystemClock
    from ferry._scheduler import SCHEDULER_LEASE, SchedulerStore, TaskTick

    clock = SystemClock()
    store = SchedulerStore(seeded)
    lease = await store.leases.acquire(
        SCHEDULER_LEASE, "node-a", now_ms=clock.now_ms(), ttl_ms=600_000
    )
    assert lease is not None
    tick = TaskTick("cli.nightly", clock.now_ms(), clock.now_ms(), clock.now_ms())
    assert await store.record_tick(tick, lease=lease, now_ms=clock.now_ms())
    leading = ferry("doctor", "--json").envelope
    [leader] = [c for c in leading["data"]["checks"] if c["name"] == "scheduler leader"]
    assert leader["ok"] and "node-a" in leader["detail"]
    await store.leases.release(SCHEDULER_LEASE, "node-a")
    result = ferry("doctor", "--json")
    assert result.code == 1
    assert [f["code"] for f in result.envelope["findings"]] == ["X_NO_SCHEDULER_LEADER"]
