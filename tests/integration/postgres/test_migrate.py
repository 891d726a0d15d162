"""Migrations: versioned, idempotent, safe when a whole fleet starts at once."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from ferry.drivers import postgres_job_driver
from ferry.drivers._postgres.migrate import known_migrations
from ferry.errors import FerryError


async def test_drivers_opening_together_on_a_fresh_schema_apply_each_migration_once(
    postgres_dsn: str, pg_schema: str, admin: asyncpg.Connection
) -> None:
    drivers = [postgres_job_driver(postgres_dsn, schema=pg_schema) for _ in range(5)]
    try:
        await asyncio.gather(*(d.open() for d in drivers))
    finally:
        await asyncio.gather(*(d.close() for d in drivers))
    versions = await admin.fetch(
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
