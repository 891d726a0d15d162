"""The fleet registry on every driver: a started worker is listed with what it serves and
holds, its presence rides on its heartbeats, a stopped worker leaves at once, one that
stopped beating lapses after three intervals and maintenance deletes its record."""

from __future__ import annotations

import os
import socket
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from support.waiting import eventually

from ferry import _fleet
from ferry._clock import FrozenClock
from ferry._identity import ferry_version
from ferry._metrics import WorkerMetrics
from ferry._operations import list_workers, workers_json
from ferry._worker import JobWorker
from ferry.drivers.protocol import JobDriver, RecordWrite, Renewal, RenewalAnswer, RetentionPolicy
from ferry.testing import Harness

from . import jobs_fixture, started_worker
from .jobs_fixture import effects
from .jobs_worker import held, held_open
from .started_worker import INTERVAL_MS


@pytest.fixture(autouse=True)
def _fresh() -> None:
    jobs_fixture.reset()
    held.clear()


def started(driver: JobDriver, **options: Any) -> AbstractAsyncContextManager[JobWorker]:
    """``started_worker.started`` running ``held_open`` unless ``options`` name the jobs."""
    return started_worker.started(driver, **{"jobs": [held_open], **options})


async def _beat_armed(clock: FrozenClock) -> None:
    """Wait until the heartbeat is asleep until its next interval (so an advance fires it)."""
    await eventually(
        lambda: clock.now_ms() + INTERVAL_MS in clock.deadlines_ms(),
        what="the next heartbeat armed an interval on",
    )


async def _ids(driver: JobDriver) -> list[str]:
    return [w.id for w in await list_workers(driver)]


async def test_a_started_worker_is_listed_with_what_it_serves_and_the_runs_it_holds(
    harness: Harness, driver: JobDriver, clock: FrozenClock
) -> None:
    beats: list[tuple[int, RecordWrite | None]] = []
    real = driver.heartbeat_many

    async def seen(
        renewals: list[Renewal], *, record: RecordWrite | None = None
    ) -> list[RenewalAnswer]:
        beats.append((len(renewals), record))
        return await real(renewals, record=record)

    driver.heartbeat_many = seen  # type: ignore[method-assign]
    async with started(driver, concurrency=4) as worker:
        await eventually(lambda: _ids(driver), what="the worker registered")
        [me] = await list_workers(driver)
        assert (me.id, me.host, me.pid, me.version) == (
            worker.worker_id,
            socket.gethostname(),
            os.getpid(),
            ferry_version(),
        )
        assert (me.queues, me.concurrency, me.runs) == (("default",), 4, ())
        assert me.started_at_ms == me.heartbeat_at_ms == clock.now_ms()

        runs = await held_open.enqueue_many([{"id": "a"}, {"id": "b"}])
        await eventually(lambda: effects["held-open:started"] == 2, what="both runs started")
        await _beat_armed(clock)
        clock.advance(INTERVAL_MS / 1000)
        ids = sorted(r.job_id for r in runs)

        async def holding() -> bool:
            workers = await list_workers(driver)
            return len(workers) == 1 and sorted(workers[0].runs) == ids

        await eventually(holding, what="the presence lists the runs it holds")
        # The presence rode on the renewal statement itself: no beat of its own.
        assert beats[-1][0] == 2 and beats[-1][1] is not None
        assert all(record is not None for _, record in beats)
        [shown] = workers_json(await list_workers(driver))["workers"]
        assert shown["held"] == 2 and shown["heartbeatAt"].endswith("Z")
        assert shown["heartbeatAtMs"] == clock.now_ms()
    assert await _ids(driver) == []  # a clean stop leaves at once


async def test_an_idle_worker_keeps_beating_and_one_that_stops_lapses_and_is_pruned(
    harness: Harness, driver: JobDriver, clock: FrozenClock
) -> None:
    async with started(driver) as worker:
        await eventually(lambda: _ids(driver), what="the worker registered")
        for _ in range(4):  # idle well past three intervals: still there, beat by beat
            await _beat_armed(clock)
            clock.advance(INTERVAL_MS / 1000)

            async def fresh() -> bool:
                [me] = await list_workers(driver)
                return me.heartbeat_at_ms == clock.now_ms()

            await eventually(fresh, what="an idle worker's presence refreshed")
        assert await _ids(driver) == [worker.worker_id]

    # A worker that died without leaving: its last presence, never renewed.
    await driver.heartbeat_many(
        [],
        record=_fleet.presence_record(
            worker_id="gone:1:abc",
            queues=["default"],
            concurrency=1,
            started_at_ms=clock.now_ms(),
            now_ms=clock.now_ms(),
            runs=[],
            interval_ms=INTERVAL_MS,
        ),
    )
    assert await _ids(driver) == ["gone:1:abc"]
    clock.advance(_fleet.PRESENCE_WINDOWS * INTERVAL_MS / 1000)
    assert await _ids(driver) == []
    report = await driver.prune(RetentionPolicy(None, None, None))
    assert report.records >= 1


async def test_the_live_workers_gauge_counts_workers_per_queue(
    harness: Harness, driver: JobDriver, clock: FrozenClock
) -> None:
    metrics = WorkerMetrics(CollectorRegistry())
    async with started(driver, metrics=metrics, stats_interval_ms=1_000, queues=["default"]):
        await eventually(lambda: _ids(driver), what="the worker registered")

        def sampled_once_registered() -> bool:
            """A sample taken before the registration landed reads no worker: while the
            gauge says otherwise, the samplers (the queue gauges' too) asleep until their
            next sample are woken, one interval at a time."""
            if metrics.registry.get_sample_value("job_workers", {"queue": "default"}) == 1.0:
                return True
            if clock.now_ms() + 1_000 in clock.deadlines_ms():
                clock.advance(1)
            return False

        await eventually(sampled_once_registered, what="job_workers{queue=default} == 1")
