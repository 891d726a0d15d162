"""Enqueue: validation before the queue, idempotency, batches, run_at and delay."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from ferry import FerryError
from ferry._clock import FrozenClock
from ferry.drivers.protocol import ClaimOptions, JobDriver, RunFilter
from ferry.testing import Harness

from .jobs_fixture import Item, flaky


async def _runs(driver: JobDriver) -> int:
    return len(await driver.introspect.list_runs(RunFilter(limit=1000)))


async def test_enqueue_writes_a_queued_run_with_a_json_payload(harness: Harness) -> None:
    result = await flaky.enqueue({"id": "a"})
    assert result.deduplicated is False
    run = await harness.driver.introspect.get_run(result.job_id)
    assert run is not None
    assert run.summary.state == "queued"
    assert run.summary.name == "conformance.flaky"
    assert run.payload == {"id": "a", "fail_times": 0}
    assert run.idempotency_key == "flaky:a"
    assert run.summary.max_attempts == 3


async def test_same_idempotency_key_returns_the_existing_run_and_writes_no_row(
    harness: Harness,
) -> None:
    first = await flaky.enqueue({"id": "a"})
    second = await flaky.enqueue(Item(id="a", fail_times=2))
    assert second.job_id == first.job_id
    assert second.deduplicated is True
    assert await _runs(harness.driver) == 1


async def test_enqueue_many_answers_in_request_order_and_dedupes(harness: Harness) -> None:
    existing = await flaky.enqueue({"id": "b"})
    results = await flaky.enqueue_many([{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "a"}])
    assert [r.deduplicated for r in results] == [False, True, False, True]
    assert results[1].job_id == existing.job_id
    assert results[3].job_id == results[0].job_id
    assert len({r.job_id for r in results}) == 3
    assert await _runs(harness.driver) == 3


async def test_a_delayed_run_is_not_claimed_before_it_is_due(
    harness: Harness, clock: FrozenClock
) -> None:
    await flaky.enqueue({"id": "later"}, delay="10m")
    await flaky.enqueue({"id": "at"}, run_at=datetime.now(UTC) + timedelta(days=400))
    claim = ClaimOptions(worker_id="w1", lease_ms=30_000, limit=10)
    assert await harness.driver.claim(claim) == []
    clock.advance("10m")
    claimed = await harness.driver.claim(claim)
    assert [c.payload["id"] for c in claimed] == ["later"]


async def test_invalid_input_is_refused_naming_the_field_and_writes_nothing(
    harness: Harness,
) -> None:
    with pytest.raises(FerryError) as refused:
        await flaky.enqueue({"id": 5, "fail_times": "many"})
    assert refused.value.code == "X_VALIDATION"
    assert "fail_times" in refused.value.message
    assert refused.value.fix
    assert await _runs(harness.driver) == 0


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"id": "x", "blob": b"raw"}, "input.extra.blob"),
        ({"id": "x", "tags": {1, 2}}, "input.extra.tags"),
        ({"id": "x", "ratio": math.nan}, "input.extra.ratio"),
        ({"id": "x", "ratio": math.inf}, "input.extra.ratio"),
        ({"id": "x", "thing": object()}, "input.extra.thing"),
    ],
)
async def test_a_payload_with_no_json_form_is_refused_naming_the_field(
    harness: Harness, payload: dict[str, object], field: str
) -> None:
    from .jobs_with_extra import loose

    with pytest.raises(FerryError) as refused:
        await loose.enqueue({"id": "x", "extra": {k: v for k, v in payload.items() if k != "id"}})
    assert refused.value.code == "X_PAYLOAD_NOT_JSON"
    assert field in refused.value.message
    assert await _runs(harness.driver) == 0


async def test_a_circular_payload_is_refused(harness: Harness) -> None:
    from .jobs_with_extra import loose

    circular: dict[str, object] = {}
    circular["self"] = circular
    with pytest.raises(FerryError) as refused:
        await loose.enqueue({"id": "x", "extra": circular})
    assert refused.value.code == "X_PAYLOAD_NOT_JSON"
    assert "circular" in refused.value.message
    assert await _runs(harness.driver) == 0


async def test_run_at_without_a_zone_is_refused(harness: Harness) -> None:
    with pytest.raises(FerryError) as refused:
        await flaky.enqueue({"id": "x"}, run_at=datetime(2030, 1, 1))
    assert refused.value.code == "X_INVARIANT"
    assert "time zone" in refused.value.message
