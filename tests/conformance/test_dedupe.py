"""Dedupe windows on every driver: ``@job(dedupe="retained" | "active" | <duration>)`` says
which stored run of its key an enqueue dedupes against; a run outside the rule gives its
key up to the new run in the enqueue's own transaction (or script), and keeps its row."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import aiosqlite
import asyncpg
import pytest
from pydantic import BaseModel

from ferry import FerryError, job
from ferry._clock import FrozenClock
from ferry._move import move_runs
from ferry.drivers import SqliteJobDriver
from ferry.drivers.protocol import SUPERSEDED_KEY_BYTES, JobDriver, RunDetail, RunFilter
from ferry.testing import Harness


class Order(BaseModel):
    id: str
    fail: bool = False


@job(input=Order, idempotency_key=lambda i: f"kept:{i.id}", name="conformance.dedupe.kept")
async def kept(input: Order) -> None:
    return None


@job(
    input=Order,
    idempotency_key=lambda i: f"active:{i.id}",
    name="conformance.dedupe.active",
    dedupe="active",
)
async def active(input: Order) -> None:
    if input.fail:
        raise RuntimeError("planned failure")


@job(
    input=Order,
    idempotency_key=lambda i: f"hourly:{i.id}",
    name="conformance.dedupe.hourly",
    dedupe="1h",
)
async def hourly(input: Order) -> None:
    return None


async def _run(driver: JobDriver, job_id: str) -> RunDetail:
    run = await driver.introspect.get_run(job_id)
    assert run is not None
    return run


async def _count(driver: JobDriver) -> int:
    return len(await driver.introspect.list_runs(RunFilter(limit=1000)))


def _superseded(key: str, job_id: str) -> str:
    """The key a superseded run is left holding (``Dedupe``'s documented form)."""
    moved = f"{key} [superseded: run {job_id}]"
    return moved + " " * (SUPERSEDED_KEY_BYTES - len(moved.encode()))


async def test_retained_is_the_default_and_dedupes_against_a_finished_run(
    harness: Harness, clock: FrozenClock
) -> None:
    first = await kept.enqueue({"id": "a"})
    await harness.drain()
    clock.advance("30d")
    again = await kept.enqueue({"id": "a"})
    assert (again.job_id, again.deduplicated) == (first.job_id, True)
    assert kept.describe()["dedupe"] == "retained"


async def test_active_dedupes_against_a_queued_run(harness: Harness) -> None:
    first = await active.enqueue({"id": "a"})
    again = await active.enqueue({"id": "a"})
    assert (again.job_id, again.deduplicated) == (first.job_id, True)
    assert await _count(harness.driver) == 1


@pytest.mark.parametrize("ending", ["completed", "dead", "cancelled"])
async def test_active_writes_a_new_run_once_the_run_of_its_key_has_ended(
    harness: Harness, ending: str
) -> None:
    first = await active.enqueue({"id": "a", "fail": ending == "dead"})
    if ending == "cancelled":
        assert await harness.driver.introspect.cancel_run(first.job_id) == "cancelled"
    else:
        await harness.drain()
    assert (await _run(harness.driver, first.job_id)).summary.state == ending

    second = await active.enqueue({"id": "a"})
    assert second.deduplicated is False and second.job_id != first.job_id
    new = await _run(harness.driver, second.job_id)
    assert (new.summary.state, new.idempotency_key) == ("queued", "active:a")
    old = await _run(harness.driver, first.job_id)
    assert old.summary.state == ending  # the ended run keeps its row, and its key shows
    assert old.idempotency_key == _superseded("active:a", first.job_id)
    assert len(old.idempotency_key.encode()) > 512  # no enqueued key can take that form

    third = await active.enqueue({"id": "a"})  # the new run is active: it dedupes
    assert (third.job_id, third.deduplicated) == (second.job_id, True)


async def test_a_key_superseded_twice_leaves_each_old_run_a_key_of_its_own(
    harness: Harness,
) -> None:
    ids = []
    for _ in range(3):
        ids.append((await active.enqueue({"id": "a"})).job_id)
        await harness.drain()
    assert len(set(ids)) == 3
    keys = [(await _run(harness.driver, job_id)).idempotency_key for job_id in ids]
    assert keys == [_superseded("active:a", ids[0]), _superseded("active:a", ids[1]), "active:a"]


async def test_a_window_dedupes_against_runs_created_within_it(
    harness: Harness, clock: FrozenClock
) -> None:
    first = await hourly.enqueue({"id": "a"})
    clock.advance(timedelta(hours=1) - timedelta(milliseconds=1))
    inside = await hourly.enqueue({"id": "a"})
    assert (inside.job_id, inside.deduplicated) == (first.job_id, True)

    clock.advance(timedelta(milliseconds=1))  # the first run is now an hour old, still queued
    outside = await hourly.enqueue({"id": "a"})
    assert outside.deduplicated is False and outside.job_id != first.job_id
    old = await _run(harness.driver, first.job_id)
    assert old.summary.state == "queued"  # a window does not look at states
    assert old.idempotency_key == _superseded("hourly:a", first.job_id)
    assert (await _run(harness.driver, outside.job_id)).idempotency_key == "hourly:a"
    assert hourly.describe()["dedupe"] == 3_600_000

    again = await hourly.enqueue({"id": "a"})
    assert (again.job_id, again.deduplicated) == (outside.job_id, True)


async def test_a_batch_supersedes_once_per_key_and_dedupes_within_itself(
    harness: Harness, clock: FrozenClock
) -> None:
    stale = await hourly.enqueue({"id": "a"})
    fresh_later = await hourly.enqueue({"id": "b"})
    clock.advance("2h")
    fresh = await hourly.enqueue({"id": "c"})
    results = await hourly.enqueue_many([{"id": "a"}, {"id": "c"}, {"id": "a"}, {"id": "b"}])
    assert [r.deduplicated for r in results] == [False, True, True, False]
    assert results[0].job_id not in (stale.job_id, fresh.job_id)
    assert results[1].job_id == fresh.job_id
    assert results[2].job_id == results[0].job_id
    assert results[3].job_id != fresh_later.job_id
    assert await _count(harness.driver) == 5
    moved = await _run(harness.driver, stale.job_id)
    assert moved.idempotency_key == _superseded("hourly:a", stale.job_id)


async def test_a_superseded_run_is_still_claimed_and_run(
    harness: Harness, clock: FrozenClock
) -> None:
    first = await hourly.enqueue({"id": "a"})
    clock.advance("1h")
    second = await hourly.enqueue({"id": "a"})
    await harness.drain()
    states = [(await _run(harness.driver, r.job_id)).summary.state for r in (first, second)]
    assert states == ["completed", "completed"]


Joined = Callable[[Callable[[Any], Awaitable[None]], bool], Awaitable[None]]


@pytest.fixture
def in_transaction(driver: JobDriver, request: pytest.FixtureRequest) -> Joined:
    """Run ``body(connection)`` in a transaction of the application's own connection to the
    driver's store, then commit it (or roll it back). Skipped where nothing can be joined."""
    if driver.name == "postgres":

        @asynccontextmanager
        async def connected() -> AsyncIterator[Any]:
            connection = await asyncpg.connect(request.getfixturevalue("postgres_dsn"))
            try:
                yield connection
            finally:
                await connection.close()

        async def on_postgres(body: Callable[[Any], Awaitable[None]], commit: bool) -> None:
            async with connected() as connection:
                transaction = connection.transaction()
                await transaction.start()
                await body(connection)
                await (transaction.commit() if commit else transaction.rollback())

        return on_postgres
    if isinstance(driver, SqliteJobDriver) and driver.name == "sqlite":

        async def on_sqlite(body: Callable[[Any], Awaitable[None]], commit: bool) -> None:
            async with aiosqlite.connect(driver.path) as connection:
                await connection.execute("BEGIN IMMEDIATE")
                await body(connection)
                await (connection.commit() if commit else connection.rollback())

        return on_sqlite
    pytest.skip(f"the {driver.name} driver joins no application transaction")


@pytest.mark.parametrize("commit", [True, False])
async def test_the_key_moves_with_the_callers_transaction(
    harness: Harness, in_transaction: Joined, commit: bool
) -> None:
    first = await active.enqueue({"id": "a"})
    await harness.drain()
    written: list[str] = []

    async def enqueue_twice(connection: Any) -> None:
        one = await active.enqueue({"id": "a"}, connection=connection)
        batch = await active.enqueue_many([{"id": "a"}, {"id": "b"}], connection=connection)
        assert not one.deduplicated and [r.deduplicated for r in batch] == [True, False]
        assert batch[0].job_id == one.job_id
        written.append(one.job_id)

    await in_transaction(enqueue_twice, commit)
    old = await _run(harness.driver, first.job_id)
    if commit:
        assert old.idempotency_key == _superseded("active:a", first.job_id)
        assert (await _run(harness.driver, written[0])).idempotency_key == "active:a"
        assert await _count(harness.driver) == 3
    else:  # rolled back: the old run keeps its key, as if nothing had been enqueued
        assert old.idempotency_key == "active:a"
        assert await _count(harness.driver) == 1
        again = await active.enqueue({"id": "a"})
        assert again.deduplicated is False


@pytest.mark.parametrize(
    ("setting", "code", "named"),
    [
        ("activ", "X_INVARIANT", "'activ'"),
        ("", "X_INVARIANT", "''"),
        (-5, "X_INVARIANT", "-5"),
        (True, "X_INVARIANT", "True"),
        (None, "X_INVARIANT", "None"),
        ("0s", "X_INVARIANT", "window of 0 ms"),
        (timedelta(0), "X_INVARIANT", "window of 0 ms"),
        ("6000w", "X_OUT_OF_RANGE", "100 years"),
        (10**20, "X_OUT_OF_RANGE", "100 years"),
    ],
)
def test_a_dedupe_that_is_no_rule_is_refused_at_declaration(
    setting: object, code: str, named: str
) -> None:
    with pytest.raises(FerryError) as refused:
        job(input=Order, idempotency_key=lambda i: i.id, dedupe=setting)  # type: ignore[arg-type]
    assert refused.value.code == code
    assert "job dedupe" in refused.value.message and named in refused.value.message
    assert refused.value.fix


async def test_racing_enqueues_of_a_superseded_key_write_one_run(harness: Harness) -> None:
    ended = [(await active.enqueue({"id": key})).job_id for key in ("a", "b")]
    await harness.drain()
    batches = [[{"id": "a"}, {"id": "b"}], [{"id": "b"}, {"id": "a"}]] * 4
    raced = await asyncio.gather(*(active.enqueue_many(batch) for batch in batches))
    by_key: dict[str, set[str]] = {"a": set(), "b": set()}
    for batch, results in zip(batches, raced, strict=True):
        for item, result in zip(batch, results, strict=True):
            by_key[item["id"]].add(result.job_id)
    assert all(len(ids) == 1 for ids in by_key.values())
    assert sum(not r.deduplicated for results in raced for r in results) == 2
    assert await _count(harness.driver) == 4
    for job_id, key in zip(ended, ("a", "b"), strict=True):
        moved = await _run(harness.driver, job_id)
        assert moved.idempotency_key == _superseded(f"active:{key}", job_id)


async def test_a_drain_moves_a_superseded_run_and_the_run_holding_its_key_without_collision(
    harness: Harness, clock: FrozenClock, other_driver: JobDriver
) -> None:
    first = await hourly.enqueue({"id": "a"})
    clock.advance("1h")
    await hourly.enqueue({"id": "a"})
    report = await move_runs(harness.driver, other_driver, drain_id="drain", batch=10)
    assert (report.total().removed, report.stopped) == (2, None)
    keys = [
        (await _run(other_driver, summary.id)).idempotency_key
        for summary in await other_driver.introspect.list_runs(RunFilter())
    ]
    assert sorted(keys) == ["hourly:a", _superseded("hourly:a", first.job_id)]
    with Harness(driver=other_driver, clock=clock, tasks=[]).installed():
        again = await hourly.enqueue({"id": "a"})  # the moved run keeps its creation instant
    assert again.deduplicated is True
