"""Roles in separate processes on one SQLite file: keyed concurrency holds across worker
processes, and an outbox entry the application commits is published by a relay process
and run by a worker process."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import aiosqlite
from support.waiting import eventually

from ferry._jobs.facade import enqueue_many
from ferry.drivers import SqliteJobDriver
from ferry.drivers.protocol import RunFilter

from . import app
from .processes import Roles

Read = Callable[[str], list[tuple[object, ...]]]


async def _completed(driver: SqliteJobDriver, count: int) -> bool:
    runs = await driver.introspect.list_runs(RunFilter(state="completed", limit=count + 1))
    return len(runs) == count


async def test_two_worker_processes_never_overlap_runs_of_a_limit_1_key(
    roles: Roles, enqueuer: SqliteJobDriver, read: Read
) -> None:
    inputs = [{"group": g, "idx": i, "hold_ms": 20} for g in ("a", "b") for i in range(20)]
    await enqueue_many(app.keyed.definition, inputs)
    for _ in range(2):
        await roles.worker("--concurrency", "8")

    async def all_completed() -> bool:
        return await _completed(enqueuer, len(inputs))

    await eventually(all_completed, within_s=90, what="every keyed run to complete")
    for group in ("a", "b"):
        intervals = read(
            f"SELECT started_ns, ended_ns FROM intervals WHERE grp = '{group}' ORDER BY 1"
        )
        assert len(intervals) == 20
        for (_, ended), (started, _) in itertools.pairwise(intervals):
            assert ended is not None
            assert started >= ended, f"two runs of key {group} overlapped"  # type: ignore[operator]


async def test_a_committed_outbox_entry_is_published_by_a_relay_and_run_by_a_worker(
    roles: Roles, enqueuer: SqliteJobDriver, db_path: Path
) -> None:
    await roles.spawn(["relay"])
    await roles.worker()
    async with aiosqlite.connect(db_path) as conn:
        await conn.execute("BEGIN IMMEDIATE")
        await enqueuer.outbox.append("noop", {"n": 7}, connection=conn)
        await conn.rollback()  # never published: it never existed
        await conn.execute("BEGIN IMMEDIATE")
        await enqueuer.outbox.append("noop", {"n": 8}, connection=conn)
        await conn.commit()

    async def ran() -> bool:
        return await _completed(enqueuer, 1)

    await eventually(ran, within_s=60, what="the published entry's run to complete")
    [run] = await enqueuer.introspect.list_runs(RunFilter())
    detail = await enqueuer.introspect.get_run(run.id)
    assert detail is not None and detail.payload == {"n": 8}
    assert await enqueuer.outbox.pending() == 0
