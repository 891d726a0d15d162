"""Migrations on a SQLite file: numbered files of their own, applied once however many
processes open the file together, and the same ledger guarantees as on Postgres."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ferry import FerryError
from ferry.drivers._sqlite.migrate import known_migrations

from .conftest import DriverFactory

Read = Callable[[str], list[tuple[object, ...]]]

_OPEN = """
import asyncio, sys
from ferry.drivers import sqlite_job_driver
async def main():
    driver = sqlite_job_driver(sys.argv[1])
    await driver.open()
    await driver.close()
asyncio.run(main())
"""


def _change(db_path: Path, sql: str) -> None:
    connection = sqlite3.connect(db_path, isolation_level=None)
    try:
        connection.execute(sql)
    finally:
        connection.close()


async def test_processes_and_drivers_opening_a_fresh_file_together_apply_each_migration_once(
    drivers: DriverFactory, db_path: Path, read: Read
) -> None:
    processes = [
        await asyncio.create_subprocess_exec(sys.executable, "-c", _OPEN, str(db_path))
        for _ in range(3)
    ]
    await asyncio.gather(*(drivers().open() for _ in range(3)))
    assert [await p.wait() for p in processes] == [0, 0, 0]
    versions = read("SELECT version, count(*) FROM ferry_migrations GROUP BY version ORDER BY 1")
    assert versions == [(m.version, 1) for m in known_migrations()]
    assert read("PRAGMA journal_mode") == [("wal",)]


async def test_migrate_on_an_up_to_date_file_applies_nothing(drivers: DriverFactory) -> None:
    driver = drivers()
    assert await driver.migrate() == [m.version for m in known_migrations()]
    assert await driver.migrate() == []


async def _refused_after(drivers: DriverFactory, db_path: Path, change: str) -> FerryError:
    """Migrate the file, run ``change`` on it, and answer how a new driver refuses it."""
    await drivers().migrate()
    _change(db_path, change)
    driver = drivers()
    with pytest.raises(FerryError) as refused:
        await driver.open()
    with pytest.raises(FerryError):
        await driver.stats()  # every later call is refused the same way, nothing runs
    return refused.value


async def test_a_file_newer_than_this_ferry_is_refused_naming_both_versions(
    drivers: DriverFactory, db_path: Path
) -> None:
    newest = known_migrations()[-1]
    refused = await _refused_after(
        drivers,
        db_path,
        "INSERT INTO ferry_migrations (version, name, applied_at_ms, checksum) "
        f"VALUES ({newest.version + 1}, 'future', 0, 'x')",
    )
    assert refused.code == "X_SCHEMA_NEWER"
    assert f"{newest.version + 1:04d}_future" in refused.message
    assert newest.label in refused.message and str(db_path) in refused.message


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ("SET name = 'renamed' WHERE version = 1", "0001_renamed"),
        ("SET checksum = 'edited' WHERE version = 1", "checksum"),
    ],
)
async def test_a_ledger_row_that_is_not_the_shipped_file_is_drift(
    drivers: DriverFactory, db_path: Path, change: str, named: str
) -> None:
    refused = await _refused_after(drivers, db_path, f"UPDATE ferry_migrations {change}")
    assert refused.code == "X_SCHEMA_DRIFT"
    assert named in refused.message and refused.fix


async def test_a_missing_ledger_row_whose_tables_exist_is_drift_and_the_fix_repairs_it(
    drivers: DriverFactory, db_path: Path
) -> None:
    lost = "DELETE FROM ferry_migrations WHERE version = 1"
    refused = await _refused_after(drivers, db_path, lost)
    assert refused.code == "X_SCHEMA_DRIFT"
    assert "0001_initial" in refused.message and "already exists" in refused.message
    # The fix line carries the statement that records the row; running it repairs the ledger.
    _change(db_path, refused.fix[refused.fix.index("INSERT") : refused.fix.index(" — then")])
    assert await drivers().migrate() == []


async def test_a_lost_ledger_beside_existing_tables_is_drift(
    drivers: DriverFactory, db_path: Path
) -> None:
    refused = await _refused_after(drivers, db_path, "DROP TABLE ferry_migrations")
    assert refused.code == "X_SCHEMA_DRIFT"
    assert known_migrations()[0].label in refused.message


async def test_a_closed_driver_refuses_work(drivers: DriverFactory) -> None:
    driver = drivers()
    await driver.close()
    with pytest.raises(FerryError) as refused:
        await driver.stats()
    assert refused.value.code == "X_DRIVER_CLOSED"
