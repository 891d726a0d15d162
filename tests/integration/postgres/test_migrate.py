"""Migrations: versioned, idempotent, safe when a whole fleet starts at once."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from ferry.drivers import postgres_job_driver
from ferry.drivers._postgres.ledger import known_migrations
from ferry.errors import FerryError


async def test_drivers_opening_together_on_a_fresh_schema_apply_each_migration_once(
    postgres_dsn: str, pg_schema: str, db: asyncpg.Connection
) -> None:
    drivers = [postgres_job_driver(postgres_dsn, schema=pg_schema) for _ in range(5)]
    try:
        await asyncio.gather(*(d.open() for d in drivers))
    finally:
        await asyncio.gather(*(d.close() for d in drivers))
    versions = await db.fetch(
        f'SELECT version, count(*) FROM "{pg_schema}".migrations GROUP BY version ORDER BY 1'
    )
    assert [(v, n) for v, n in versions] == [(m.version, 1) for m in known_migrations()]


async def test_migrate_on_an_up_to_date_schema_applies_nothing(
    postgres_dsn: str, pg_schema: str
) -> None:
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema)
    try:
        assert await driver.migrate() == [m.version for m in known_migrations()]
        assert await driver.migrate() == []
        await driver.open()
    finally:
        await driver.close()


@pytest.mark.parametrize(
    "schema", ["Ferry", "ferry-jobs", "1ferry", 'x"; DROP TABLE y; --', "", "a" * 64]
)
def test_a_schema_name_that_is_not_a_plain_identifier_is_refused(schema: str) -> None:
    with pytest.raises(FerryError) as refused:
        postgres_job_driver("postgresql://unused", schema=schema)
    assert refused.value.code == "X_INVARIANT"
    assert repr(schema) in refused.value.message


def test_a_schema_name_too_long_for_its_notify_channel_is_refused() -> None:
    with pytest.raises(FerryError) as refused:
        postgres_job_driver("postgresql://unused", schema="a" * 60)
    assert refused.value.code == "X_INVARIANT"
    assert "56 characters" in refused.value.fix  # "<schema>_outbox" is the longer channel


async def test_a_closed_driver_refuses_work(postgres_dsn: str, pg_schema: str) -> None:
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema)
    await driver.close()
    with pytest.raises(FerryError) as refused:
        await driver.stats()
    assert refused.value.code == "X_DRIVER_CLOSED"


# -- the ledger is judged before anything runs on the schema ---------------------------------


async def _migrated(postgres_dsn: str, schema: str) -> None:
    driver = postgres_job_driver(postgres_dsn, schema=schema)
    try:
        await driver.migrate()
    finally:
        await driver.close()


async def _refused_after(
    postgres_dsn: str, schema: str, db: asyncpg.Connection, change: str, *args: object
) -> FerryError:
    """Migrate ``schema``, run ``change`` on it, and answer how a driver's open refuses it."""
    await _migrated(postgres_dsn, schema)
    await db.execute(change, *args)
    driver = postgres_job_driver(postgres_dsn, schema=schema)
    try:
        with pytest.raises(FerryError) as refused:
            await driver.open()
        with pytest.raises(FerryError):
            await driver.stats()  # every later call is refused the same way, nothing runs
    finally:
        await driver.close()
    return refused.value


async def test_a_schema_newer_than_this_ferry_is_refused_naming_both_versions(
    postgres_dsn: str, pg_schema: str, db: asyncpg.Connection
) -> None:
    newest = known_migrations()[-1]
    refused = await _refused_after(
        postgres_dsn,
        pg_schema,
        db,
        f"INSERT INTO \"{pg_schema}\".migrations VALUES ({newest.version + 1}, 'future', 0)",
    )
    assert refused.code == "X_SCHEMA_NEWER"
    assert f"{newest.version + 1:04d}_future" in refused.message
    assert newest.label in refused.message
    assert refused.fix


async def test_a_missing_ledger_row_whose_objects_exist_is_drift_and_the_fix_repairs_it(
    postgres_dsn: str, pg_schema: str, db: asyncpg.Connection
) -> None:
    dropped = known_migrations()[-2]
    refused = await _refused_after(
        postgres_dsn,
        pg_schema,
        db,
        f'DELETE FROM "{pg_schema}".migrations WHERE version = $1',
        dropped.version,
    )
    assert refused.code == "X_SCHEMA_DRIFT"
    assert dropped.label in refused.message and "already exists" in refused.message
    # The fix line carries the statement that records the row; running it repairs the ledger.
    repair = refused.fix[refused.fix.index("INSERT") : refused.fix.index(" — then")]
    await db.execute(repair)
    await _migrated(postgres_dsn, pg_schema)


async def test_a_lost_ledger_beside_existing_tables_is_drift_not_a_duplicate_table_error(
    postgres_dsn: str, pg_schema: str, db: asyncpg.Connection
) -> None:
    refused = await _refused_after(
        postgres_dsn, pg_schema, db, f'DROP TABLE "{pg_schema}".migrations'
    )
    assert refused.code == "X_SCHEMA_DRIFT"
    assert known_migrations()[0].label in refused.message


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ("SET name = 'outbox' WHERE version = 3", "0003_outbox"),
        ("SET checksum = 'edited' WHERE version = 1", "checksum"),
    ],
)
async def test_a_ledger_row_that_is_not_the_shipped_file_is_drift(
    postgres_dsn: str, pg_schema: str, db: asyncpg.Connection, change: str, named: str
) -> None:
    refused = await _refused_after(
        postgres_dsn, pg_schema, db, f'UPDATE "{pg_schema}".migrations {change}'
    )
    assert refused.code == "X_SCHEMA_DRIFT"
    assert named in refused.message and refused.fix


async def test_a_ledger_from_before_checksums_is_read_and_gets_its_checksums(
    postgres_dsn: str, pg_schema: str, db: asyncpg.Connection
) -> None:
    await _migrated(postgres_dsn, pg_schema)
    await db.execute(f'ALTER TABLE "{pg_schema}".migrations DROP COLUMN checksum')
    await _migrated(postgres_dsn, pg_schema)
    rows = await db.fetch(f'SELECT version, checksum FROM "{pg_schema}".migrations ORDER BY 1')
    assert [(r["version"], r["checksum"]) for r in rows] == [
        (m.version, m.checksum) for m in known_migrations()
    ]


def test_the_migration_numbers_keep_their_gap_so_old_ledgers_still_match() -> None:
    # 0004 was never shipped; databases migrated by earlier ferries record 5 and 6.
    assert [m.label for m in known_migrations()][3:5] == ["0005_cancel_requests", "0006_caps"]
