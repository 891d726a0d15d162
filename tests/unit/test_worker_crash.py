"""A bug in the worker's own loop is never left to asyncio: it is logged as
``jobs.worker.crashed``, the worker drains, and ``run()`` raises — so the process exits and
is restarted instead of answering ``/livez`` while it claims nothing."""

from __future__ import annotations

import asyncio
import logging

import pytest
from pydantic import BaseModel

from ferry import job
from ferry._clock import FrozenClock
from ferry._worker import JobWorker
from ferry.drivers import memory_job_driver
from ferry.drivers.protocol import ClaimOptions


class Nothing(BaseModel):
    n: int


@job(input=Nothing, idempotency_key=lambda i: f"crash:{i.n}", name="crash.noop")
async def noop(input: Nothing) -> None:
    """Never runs: the loop dies before it claims."""


class Broken(JobWorker):
    """A worker whose claim options cannot be built: a bug inside the round-trip loop."""

    def _claim_options(self, free: int) -> ClaimOptions:
        raise RuntimeError("a bug in the loop")


async def test_a_crashed_round_trip_loop_is_logged_drains_and_makes_run_raise(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="ferry")
    driver = memory_job_driver(clock=FrozenClock())
    try:
        worker = Broken(driver=driver, jobs=[noop])
        with pytest.raises(RuntimeError, match="a bug in the loop"):
            await asyncio.wait_for(worker.run(), 30)
    finally:
        await driver.close()
    [crashed] = [r for r in caplog.records if r.getMessage() == "jobs.worker.crashed"]
    assert crashed.levelname == "ERROR" and crashed.__dict__["during"] == "round-trips"
    assert crashed.exc_info is not None
    [draining] = [r for r in caplog.records if r.getMessage() == "jobs.worker.draining"]
    assert draining.__dict__["signal"] == "worker-crashed"
