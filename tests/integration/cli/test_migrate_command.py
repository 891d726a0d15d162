"""``ferry migrate`` says what it applied; every command and role refuses a schema newer
than this ferry or with a drifted ledger, and ``doctor`` reports the same findings."""

from __future__ import annotations

import asyncpg
import pytest

from ferry.drivers._postgres.ledger import known_migrations

from .conftest import Ferry


def test_migrate_json_on_a_fresh_schema_reports_every_migration_it_applied(ferry: Ferry) -> None:
    first = ferry("migrate", "--json")
    assert first.code == 0, first
    assert first.envelope["data"]["applied"] == [m.version for m in known_migrations()]
    assert first.envelope["data"]["migrations"] == [m.label for m in known_migrations()]
    again = ferry("migrate", "--json")
    assert again.envelope["data"]["applied"] == []
    assert "already up to date" in again.envelope["summary"]


async def migrated_then(ferry: Ferry, postgres_dsn: str, change: str) -> None:
    """Migrate the test's schema with ``ferry migrate``, then run ``change`` on it."""
    assert ferry("migrate").code == 0
    connection = await asyncpg.connect(postgres_dsn)
    try:
        await connection.execute(change)
    finally:
        await connection.close()


@pytest.fixture
async def newer_schema(ferry: Ferry, postgres_dsn: str, pg_schema: str) -> int:
    """The test's schema, migrated, then marked as migrated by a future ferry."""
    future = known_migrations()[-1].version + 1
    await migrated_then(
        ferry,
        postgres_dsn,
        f"INSERT INTO \"{pg_schema}\".migrations VALUES ({future}, 'future', 0)",
    )
    return future


@pytest.mark.parametrize(
    "command",
    [
        ["jobs", "ls"],
        ["migrate"],
        ["doctor"],
        ["queues", "pause", "mail"],
        ["tasks", "list"],
        ["worker", "--metrics-port", "0"],
        ["scheduler", "--metrics-port", "0"],
        ["relay", "--metrics-port", "0"],
    ],
    ids=" ".join,
)
def test_every_command_and_role_refuses_a_schema_newer_than_this_ferry(
    ferry: Ferry, newer_schema: int, command: list[str]
) -> None:
    result = ferry(*command, "--json")
    assert result.code == 1 and "Traceback" not in result.stderr, result.stderr
    [finding] = result.envelope["findings"]
    assert finding["code"] == "X_SCHEMA_NEWER"
    assert f"{newer_schema:04d}_future" in finding["message"]
    assert known_migrations()[-1].label in finding["message"]


async def test_doctor_reports_a_drifted_ledger_with_its_repair(
    ferry: Ferry, postgres_dsn: str, pg_schema: str
) -> None:
    await migrated_then(
        ferry,
        postgres_dsn,
        f"UPDATE \"{pg_schema}\".migrations SET checksum = 'edited' WHERE version = 1",
    )
    result = ferry("doctor", "--json")
    assert result.code == 1
    [finding] = result.envelope["findings"]
    assert finding["code"] == "X_SCHEMA_DRIFT"
    assert "0001_initial" in finding["message"] and "UPDATE" in finding["fix"]
