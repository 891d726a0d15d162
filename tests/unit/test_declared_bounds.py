"""Declaration-time numbers are refused where they are written, naming the setting and
its bound: a priority, an attempt count, a limit or a cap past the integer column, a
duration past 100 years. What passes is what every driver stores and claims by."""

from __future__ import annotations

import time
from typing import Any

import pytest
from pydantic import BaseModel

from ferry import Concurrency, FerryError, Retry, job, task
from ferry._bounds import INT32_MAX, INT32_MIN, MAX_DURATION_MS
from ferry._duration import to_ms
from ferry._jobs.policy import Caps


class Org(BaseModel):
    org_id: str


def declare(**options: Any) -> Any:
    async def body(input: Org) -> None:
        return None

    return job(input=Org, idempotency_key=lambda i: f"k:{i.org_id}", **options)(body)


@pytest.mark.parametrize(
    "priority", [INT32_MAX + 1, INT32_MIN - 1, 10**20, 1.5, "10", True, None, float("nan")]
)
def test_a_priority_that_is_no_stored_integer_is_refused_at_declaration(priority: Any) -> None:
    """A float or string priority used to be stored, and on memory and Redis broke every
    later claim of the worker that compared it."""
    with pytest.raises(FerryError) as refused:
        declare(priority=priority, name=f"p-{time.monotonic_ns()}")
    assert refused.value.code == "X_OUT_OF_RANGE"
    assert refused.value.message.startswith("job priority")
    assert str(INT32_MAX) in refused.value.message


def test_the_integer_column_bounds_are_priorities_a_job_may_have() -> None:
    for priority in (INT32_MIN, 0, INT32_MAX):
        assert declare(priority=priority, name=f"p-{priority}").definition.priority == priority


@pytest.mark.parametrize(
    ("build", "named"),
    [
        (lambda: Retry(attempts=INT32_MAX + 1), "Retry(attempts=2147483648)"),
        (lambda: Retry(attempts=10**30), "Retry(attempts="),
        (lambda: Concurrency(limit=2**40), "Concurrency(limit="),
        (lambda: Caps(per_tenant=2**31), "Caps(per_tenant="),
        (lambda: Caps(per_queue={"mail": 2**31}), "Caps(per_queue['mail']="),
        (lambda: Retry(base=10**20), "Retry.base"),
        (lambda: Retry(max="36501d"), "Retry.max"),
        (lambda: declare(timeout=1e300, name="t-huge"), "job timeout"),
        (
            lambda: task(cron="0 3 * * *", tz="UTC", enqueue=lambda ms: [], max_catch_up=2**31),
            "max_catch_up",
        ),
    ],
)
def test_counts_and_durations_past_their_bound_are_refused_by_name(build: Any, named: str) -> None:
    with pytest.raises(FerryError) as refused:
        build()
    assert refused.value.code == "X_OUT_OF_RANGE", refused.value
    assert named in refused.value.message
    assert refused.value.fix


def test_the_longest_duration_is_a_hundred_years() -> None:
    assert to_ms("36500d") == MAX_DURATION_MS
    with pytest.raises(FerryError) as refused:
        to_ms(MAX_DURATION_MS / 1000 + 0.001, what="delay")
    assert refused.value.code == "X_OUT_OF_RANGE" and "100 years" in refused.value.message


def test_backoff_for_the_largest_attempt_count_is_immediate_and_capped() -> None:
    """Exponential backoff doubles up to its cap; the attempt number never becomes the
    exponent of a power of two (2**2147483646 would take minutes and gigabytes)."""
    retry = Retry(attempts=INT32_MAX, base="1s", max="1h")
    assert [retry.delay_ms(n) for n in (1, 2, 3, 12, 13, INT32_MAX)] == [
        1_000,
        2_000,
        4_000,
        2_048_000,
        3_600_000,
        3_600_000,
    ]


def test_a_task_lists_at_most_a_hundred_next_occurrences() -> None:
    nightly = task(cron="0 3 * * *", tz="UTC", enqueue=lambda ms: [], name="bounded-nightly")
    assert len(nightly.next_occurrences(100, after_ms=0)) == 100
    for count in (0, 101, 10**9):
        with pytest.raises(FerryError) as refused:
            nightly.next_occurrences(count, after_ms=0)
        assert refused.value.code == "X_OUT_OF_RANGE" and "count" in refused.value.message
