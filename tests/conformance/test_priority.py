"""Per-enqueue priority on every driver: ``.enqueue(input, priority=...)`` overrides the
declaration's for that run, within the bounds a run can store."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from ferry import FerryError, job
from ferry.drivers.protocol import ClaimOptions, JobDriver, RunFilter
from ferry.testing import Harness


class Item(BaseModel):
    id: str


@job(input=Item, idempotency_key=lambda i: f"prio:{i.id}", name="conformance.prio", priority=1)
async def prioritised(input: Item) -> None:
    return None


async def test_an_enqueue_priority_overrides_the_declared_one(
    harness: Harness, driver: JobDriver
) -> None:
    low = await prioritised.enqueue({"id": "low"}, priority=-3)
    declared = await prioritised.enqueue({"id": "declared"})
    high = await prioritised.enqueue({"id": "high"}, priority=9)
    claimed = await driver.claim(ClaimOptions("w1", 30_000, limit=3))
    assert [run.id for run in claimed] == [high.job_id, declared.job_id, low.job_id]


@pytest.mark.parametrize("priority", [2**31, -(2**31) - 1, 1.5, "9", True])
async def test_a_priority_out_of_bounds_is_refused_and_nothing_is_written(
    harness: Harness, driver: JobDriver, priority: object
) -> None:
    with pytest.raises(FerryError) as refused:
        await prioritised.enqueue({"id": "x"}, priority=priority)  # type: ignore[arg-type]
    assert refused.value.code == "X_OUT_OF_RANGE"
    assert "enqueue priority" in refused.value.message and refused.value.fix
    assert driver.introspect is not None
    assert await driver.introspect.list_runs(RunFilter()) == []
