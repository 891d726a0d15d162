"""Introspection on Postgres: pages walk ids as numbers, and odd ids name no run."""

from __future__ import annotations

import pytest
from support.runs import send

from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import RunFilter
from ferry.errors import FerryError


async def test_pages_run_newest_first_by_numeric_id(driver: PostgresJobDriver) -> None:
    ids = [r.job_id for r in await driver.enqueue_many([send(f"r{i}") for i in range(25)])]
    first = await driver.introspect.list_runs(RunFilter(limit=10))
    second = await driver.introspect.list_runs(RunFilter(limit=10, before_id=first[-1].id))
    third = await driver.introspect.list_runs(RunFilter(limit=10, before_id=second[-1].id))
    assert [r.id for r in (*first, *second, *third)] == ids[::-1]


@pytest.mark.parametrize("job_id", ["0", "01", "-1", "x", "9" * 30, "١"])
async def test_an_id_no_run_can_have_is_not_found(driver: PostgresJobDriver, job_id: str) -> None:
    await driver.enqueue(send("only"))
    assert await driver.introspect.get_run(job_id) is None
    with pytest.raises(FerryError) as refused:
        await driver.introspect.retry_run(job_id)
    assert refused.value.code == "X_RUN_NOT_FOUND"
    assert await driver.steps.load(job_id) == {}
