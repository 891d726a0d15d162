"""Run the demo: enqueue onboarding runs, work them to completion, print what happened.

``python -m examples.demo`` uses ``DATABASE_URL`` when set and the embedded PostgreSQL
(under ``.ferry/``) otherwise.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import uuid
from datetime import UTC, datetime

from examples.demo.app import api
from examples.demo.jobs import onboard_org
from examples.demo.tasks import nightly_digest
from ferry import job_worker, set_job_driver
from ferry.drivers import JobDriver, RunFilter
from ferry.drivers.capabilities import INTROSPECT, need
from ferry.embedded import default_job_driver


async def main() -> int:
    # One line per retry or failure; the flaky org's first nudge is meant to fail once.
    logging.basicConfig(level=logging.WARNING, format="  %(levelname)s %(name)s %(message)s")
    logging.getLogger("ferry.jobs").setLevel(logging.ERROR)
    driver, where = await default_job_driver()
    set_job_driver(driver)
    print(f"ferry demo — queue on {where}")
    orgs = [uuid.uuid4() for _ in range(3)]
    ids = [
        (await onboard_org.enqueue({"org_id": org, "flaky_mail": index == 0})).job_id
        for index, org in enumerate(orgs)
    ]
    again = await onboard_org.enqueue({"org_id": orgs[1]})
    print(
        f"enqueued {len(ids)} onboarding runs; re-enqueue of org 2 deduplicated: "
        f"{again.deduplicated}"
    )
    worker = job_worker(jobs=api.jobs.values(), concurrency=4)
    await worker.start()
    try:
        await _until_settled(driver, ids)
    finally:
        await worker.stop()
    failed = False
    for job_id in ids:
        run = await driver.introspect.get_run(job_id)
        assert run is not None
        steps = ", ".join(step.name for step in run.steps)
        print(
            f"  run {job_id:>4}  {run.summary.state:<9} attempts={run.summary.attempts}  "
            f"steps: {steps}"
        )
        failed = failed or run.summary.state != "completed"
    print(
        f"task {nightly_digest.name!r} ({nightly_digest.describe_schedule()}, "
        f"{nightly_digest.tz}) fires next at:"
    )
    for instant in nightly_digest.next_occurrences(3):
        local = datetime.fromtimestamp(instant / 1000, UTC).astimezone(nightly_digest.zone)
        print(f"  {local.isoformat()}")
    await driver.close()
    print("to watch it live with the dashboard: make dev")
    return 1 if failed else 0


async def _until_settled(driver: JobDriver, ids: list[str], budget_s: float = 60.0) -> None:
    """Poll the runs until none is queued, running or sleeping (bounded)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + budget_s
    while loop.time() < deadline:
        introspect = need(driver, INTROSPECT, by="the demo's progress report")
        runs = await introspect.list_runs(RunFilter(name=onboard_org.name, limit=100))
        if runs and all(r.state in ("completed", "dead", "cancelled") for r in runs):
            return
        await asyncio.sleep(0.1)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
