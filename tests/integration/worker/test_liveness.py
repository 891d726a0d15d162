"""The worker process: ``ferry run`` picks it by ``ROLE``; its one port serves ``/metrics``
with the catalog and ``/livez``, which fails on a wedged event loop."""

from __future__ import annotations

import socket

from support.processes import Fleet
from support.waiting import eventually

from ferry._jobs.facade import enqueue_many
from ferry.drivers import PostgresJobDriver

from . import app


async def test_liveness_fails_while_the_event_loop_is_wedged_and_recovers_after(
    driver: PostgresJobDriver, fleet: Fleet
) -> None:
    worker = await fleet.worker(extra=["--loop-lag-budget-seconds", "0.5"])
    assert (await worker.http("/livez"))[0] == 200
    await app.wedge.enqueue({"seconds": 8})

    async def failing() -> bool:
        return (await worker.http("/livez"))[0] == 503

    await eventually(failing, within_s=15, what="/livez to fail while the loop is blocked")
    status, body = await worker.http("/metrics")
    assert status == 200 and "job_runs_in_flight 1.0" in body, "scrapes still answer"

    async def alive() -> bool:
        return (await worker.http("/livez"))[0] == 200

    await eventually(alive, within_s=20, what="/livez to recover once the loop runs")


async def test_ferry_run_as_worker_reports_runs_by_outcome_queue_depth_and_the_wake_listener(
    driver: PostgresJobDriver, fleet: Fleet
) -> None:
    await enqueue_many(app.noop.definition, [{"n": n} for n in range(20)])
    worker = await fleet.worker(via_role=True)  # ROLE=worker ferry run

    async def all_completed() -> bool:
        done = await worker.metric(
            "job_runs_total", queue="default", job="noop", outcome="completed"
        )
        return done == 20

    await eventually(all_completed, within_s=20, what="20 completed runs counted")
    body = (await worker.http("/metrics"))[1]
    assert 'job_run_duration_seconds_count{job="noop",queue="default"} 20.0' in body
    assert "job_claim_duration_seconds_count" in body
    assert await worker.metric("job_wake_listener_healthy") == 1
    assert await worker.metric("job_queue_depth", queue="default", state="queued") is not None
    assert await worker.metric("job_queue_oldest_age_seconds", queue="default") is not None


async def test_a_worker_refuses_to_start_on_a_metrics_port_already_bound(
    driver: PostgresJobDriver, fleet: Fleet
) -> None:
    with socket.socket() as taken:
        taken.bind(("", 0))
        taken.listen()
        port = taken.getsockname()[1]
        worker = await fleet.worker(metrics_port=port, ready=False)
        assert await worker.wait(within_s=30) != 0
    assert f"metrics port {port} cannot be bound" in worker.log()
    assert "X_INVARIANT" in worker.log()
