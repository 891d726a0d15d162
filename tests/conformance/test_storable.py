"""What every driver can store, refused at the facade before any queue sees it.

Each refusal is an ``X_*`` code naming the field, on every driver alike, and writes
nothing; what the rules let through round-trips as written.
"""

from __future__ import annotations

from typing import Any

import pytest

from ferry import FerryError
from ferry._payload import MAX_DEPTH
from ferry.drivers.protocol import AckOptions, ClaimOptions, JobDriver, RunFilter
from ferry.testing import Harness

from .jobs_storable import blob, grouped, raises_text, step_returns_text, tenanted

NUL = "a\x00b"
SURROGATE = "a\ud800b"
CLAIM = ClaimOptions(worker_id="w", lease_ms=30_000, limit=10)


async def _runs(driver: JobDriver) -> int:
    return len(await driver.introspect.list_runs(RunFilter(limit=1000)))


async def _refused(harness: Harness, enqueue: Any, code: str, *named: str) -> FerryError:
    """Run ``enqueue()``, expect the refusal ``code`` naming each of ``named``, and no row."""
    with pytest.raises(FerryError) as refused:
        await enqueue()
    assert refused.value.code == code, refused.value
    for name in named:
        assert name in refused.value.message, (name, refused.value.message)
    assert refused.value.fix
    assert await _runs(harness.driver) == 0
    return refused.value


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"name": NUL}, "input.data.name"),
        ({"name": SURROGATE}, "input.data.name"),
        ({"list": ["ok", NUL]}, "input.data.list[1]"),
        ({"meta": {NUL: 1}}, r"input.data.meta['a\x00b']"),
        ({"meta": {SURROGATE: 1}}, r"input.data.meta['a\ud800b']"),
    ],
)
async def test_unstorable_text_anywhere_in_the_payload_is_refused_naming_its_path(
    harness: Harness, data: Any, path: str
) -> None:
    await _refused(
        harness, lambda: blob.enqueue({"key": "k", "data": data}), "X_TEXT_NOT_STORABLE", path
    )


@pytest.mark.parametrize("key", [NUL, SURROGATE])
async def test_an_unstorable_idempotency_key_is_refused(harness: Harness, key: str) -> None:
    error = await _refused(
        harness, lambda: blob.enqueue({"key": key}), "X_TEXT_NOT_STORABLE", "idempotency key"
    )
    assert "\x00" not in str(error) and "\ud800" not in str(error), "the message is storable too"


async def test_a_ten_kilobyte_idempotency_key_is_refused(harness: Harness) -> None:
    await _refused(
        harness,
        lambda: blob.enqueue({"key": "k" * 10_240}),
        "X_IDEMPOTENCY_KEY_INVALID",
        "10,240 bytes",
        "512",
    )


async def test_a_512_byte_key_is_stored_and_one_byte_more_is_refused(harness: Harness) -> None:
    key = "é" * 256  # two bytes each in UTF-8: the limit is bytes, not characters
    result = await blob.enqueue({"key": key})
    run = await harness.driver.introspect.get_run(result.job_id)
    assert run is not None and run.idempotency_key == key
    with pytest.raises(FerryError) as refused:
        await blob.enqueue({"key": key + "x"})
    assert refused.value.code == "X_IDEMPOTENCY_KEY_INVALID"


async def test_nesting_up_to_the_cap_round_trips_and_deeper_is_refused(harness: Harness) -> None:
    # input -> data -> MAX_DEPTH - 1 lists: exactly MAX_DEPTH containers
    result = await blob.enqueue({"key": "deep", "data": nested(MAX_DEPTH - 1)})
    [claimed] = await harness.driver.claim(CLAIM)
    assert claimed.id == result.job_id and claimed.payload["data"] == nested(MAX_DEPTH - 1)
    await harness.driver.ack(claimed.id, AckOptions(worker_id="w"))
    before = await _runs(harness.driver)
    with pytest.raises(FerryError) as refused:
        await blob.enqueue({"key": "deeper", "data": nested(MAX_DEPTH)})
    assert refused.value.code == "X_PAYLOAD_TOO_DEEP"
    assert "input.data[0][0]" in refused.value.message
    assert await _runs(harness.driver) == before


async def test_nesting_far_past_the_recursion_limit_is_refused_not_a_recursion_error(
    harness: Harness,
) -> None:
    await _refused(
        harness,
        lambda: blob.enqueue({"key": "bomb", "data": nested(100_000)}),
        "X_PAYLOAD_TOO_DEEP",
        "input.data",
    )


async def test_a_fifty_megabyte_payload_is_refused_naming_its_largest_field(
    harness: Harness,
) -> None:
    big = {"blob": "x" * (50 * 1024 * 1024), "small": "y"}
    await _refused(
        harness,
        lambda: blob.enqueue({"key": "big", "data": big}),
        "X_PAYLOAD_TOO_LARGE",
        "1,048,576",
        "input.data",
    )


async def test_an_integer_too_long_to_write_out_is_refused(harness: Harness) -> None:
    await _refused(
        harness,
        lambda: blob.enqueue({"key": "int", "data": {"n": 10**5000}}),
        "X_PAYLOAD_NOT_JSON",
        "input.data.n",
    )


async def test_large_and_tiny_floats_come_back_as_the_same_numbers(harness: Harness) -> None:
    numbers = [1e16, -1.5e300, 1e23, 5e-324, 0.1, 1.0, -0.0, 2**63, 10**100]
    await blob.enqueue({"key": "floats", "data": numbers})
    [claimed] = await harness.driver.claim(CLAIM)
    assert claimed.payload["data"] == numbers


@pytest.mark.parametrize(
    ("tenant", "code"),
    [(NUL, "X_TEXT_NOT_STORABLE"), ("", "X_INVARIANT"), (" padded", "X_INVARIANT")],
)
async def test_a_bad_tenant_is_refused(harness: Harness, tenant: str, code: str) -> None:
    await _refused(
        harness, lambda: tenanted.enqueue({"key": "t", "tenant": tenant}), code, "tenant"
    )


@pytest.mark.parametrize(
    ("group", "code"), [(NUL, "X_TEXT_NOT_STORABLE"), ("g" * 600, "X_INVARIANT")]
)
async def test_a_bad_concurrency_key_is_refused(harness: Harness, group: str, code: str) -> None:
    await _refused(
        harness,
        lambda: grouped.enqueue({"key": "c", "group": group}),
        code,
        "concurrency key",
    )


@pytest.mark.parametrize(("queue", "code"), [("", "X_INVARIANT"), (NUL, "X_TEXT_NOT_STORABLE")])
async def test_a_bad_queue_at_enqueue_is_refused(harness: Harness, queue: str, code: str) -> None:
    await _refused(harness, lambda: blob.enqueue({"key": "q"}, queue=queue), code, "queue")


async def test_one_bad_input_in_a_batch_writes_none_of_it(harness: Harness) -> None:
    await _refused(
        harness,
        lambda: blob.enqueue_many([{"key": "fine"}, {"key": "bad", "data": NUL}]),
        "X_TEXT_NOT_STORABLE",
        "input.data",
    )


@pytest.mark.parametrize("queue", ["", "\x00"])
async def test_pausing_a_queue_with_no_usable_name_is_refused(harness: Harness, queue: str) -> None:
    with pytest.raises(FerryError) as refused:
        await harness.driver.introspect.pause_queue(queue)
    assert refused.value.code in ("X_INVARIANT", "X_TEXT_NOT_STORABLE")
    assert not any(stats.paused for stats in await harness.driver.stats())


async def test_a_step_result_that_cannot_be_stored_fails_the_run_with_a_code(
    harness: Harness,
) -> None:
    result = await harness.run_jobs(step_returns_text, {"key": "s", "text": "nul"})
    run = await harness.driver.introspect.get_run(result.job_id)
    assert run is not None and run.summary.state == "dead"
    assert run.summary.last_error is not None
    assert run.summary.last_error.code == "X_TEXT_NOT_STORABLE"
    assert "echo" in run.summary.last_error.message


@pytest.mark.parametrize("text", ["nul", "surrogate", "long"])
async def test_a_body_error_with_unstorable_or_huge_text_still_settles(
    harness: Harness, text: str
) -> None:
    result = await harness.run_jobs(raises_text, {"key": "e", "text": text})
    run = await harness.driver.introspect.get_run(result.job_id)
    assert run is not None and run.summary.state == "dead"
    assert run.summary.last_error is not None
    assert run.summary.last_error.code == "X_JOB_FAILED"
    assert len(run.summary.last_error.message) < 5_000


@pytest.mark.driver_options(max_payload_bytes=100)
async def test_the_payload_limit_is_the_drivers_own(driver: JobDriver) -> None:
    assert driver.max_payload_bytes == 100
    harness = Harness(driver=driver)
    with harness.installed():
        await blob.enqueue({"key": "fits", "data": "x" * 40})
        with pytest.raises(FerryError) as refused:
            await blob.enqueue({"key": "over", "data": "x" * 100})
    assert refused.value.code == "X_PAYLOAD_TOO_LARGE"
    assert "limit of 100" in refused.value.message and "input.data" in refused.value.message
    assert await _runs(driver) == 1


@pytest.mark.parametrize(
    ("limit", "code"),
    [(0, "X_INVARIANT"), (-1, "X_INVARIANT"), (True, "X_INVARIANT"), (2**40, "X_OUT_OF_RANGE")],
)
def test_a_payload_limit_no_store_keeps_is_refused_where_the_driver_is_built(
    limit: int, code: str
) -> None:
    from ferry.drivers import (
        memory_job_driver,
        postgres_job_driver,
        redis_job_driver,
        sqlite_job_driver,
    )

    for build in (
        lambda: memory_job_driver(max_payload_bytes=limit),
        lambda: postgres_job_driver("postgresql://h/db", max_payload_bytes=limit),
        lambda: redis_job_driver("redis://h/0", max_payload_bytes=limit),
        lambda: sqlite_job_driver("unused.db", max_payload_bytes=limit),
    ):
        with pytest.raises(FerryError) as refused:
            build()
        assert refused.value.code == code
        assert "max_payload_bytes" in refused.value.message
