"""Run the demo: enqueue a team's onboarding (a fan-out of one run per org, waited for),
work it to completion, read its result, print what happened.

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
from examples.demo.jobs import onboard_team
from examples.demo.tasks import nightly_digest
from ferry import job_worker, set_job_driver
from ferry.drivers.capabilities import INTROSPECT, need
from ferry.embedded import default_job_driver


async def main() -> int:
    # One line per retry or failure; the flaky org's first nudge is meant to fail once.
    logging.basicConfig(level=logging.WARNING, format="  %(levelname)s %(name)s %(message)s")
    logging.getLogger("ferry.jobs").setLevel(logging.ERROR)
    driver, where = await default_job_driver()
    set_job_driver(driver)
    print(f"ferry demo — queue on {where}")
    team = {"team": f"team-{uuid.uuid4().hex[:6]}", "org_ids": [uuid.uuid4() for _ in range(3)]}
    queued = await onboard_team.enqueue(team)
    again = await onboard_team.enqueue(team)
    print(
        f"enqueued the onboarding of {len(team['org_ids'])} orgs as run {queued.job_id}; "
        f"enqueued again: deduplicated={again.deduplicated}"
    )
    worker = job_worker(jobs=api.jobs.values(), concurrency=4)
    await worker.start()
    try:
        # Waits for the run to end, woken by the driver when it does (no polling loop).
        tally = await queued.result(timeout="60s")
    finally:
        await worker.stop()
    print(f"run {queued.job_id}'s result: {tally}")
    introspect = need(driver, INTROSPECT, by="the demo's report")
    parent = await introspect.get_run(queued.job_id)
    assert parent is not None
    failed = tally["onboarded"] != len(team["org_ids"])
    for run in [parent.summary, *parent.children]:
        detail = await introspect.get_run(run.id)
        assert detail is not None
        steps = ", ".join(step.name for step in detail.steps)
        print(
            f"  {'' if run is parent.summary else '└ '}run {run.id:>4}  {run.name:<13} "
            f"{run.state:<9} attempts={run.attempts}  steps: {steps}"
        )
        failed = failed or run.state != "completed"
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


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
