"""``kill -9`` of the workers running a 1,000-child fan-out: every child runs, nothing is
enqueued twice, and the parent resumes exactly once — on every durable driver."""

from __future__ import annotations

import asyncio
import random
import time

import asyncpg
from support.processes import FerryProcess, Fleet
from support.waiting import eventually
from worker import app

from ferry._jobs.facade import enqueue
from ferry.drivers.protocol import JobDriver, RunFilter

CHILDREN = 1_000
WORKERS = 3
MAX_KILLS = 10


async def test_killed_workers_run_every_child_once_enqueued_and_the_parent_resumes_once(
    driver: JobDriver, db: asyncpg.Connection, fleet: Fleet
) -> None:
    """Budget: one parent (queue "parents", on a worker never killed) fans out 1,000
    children of 400 ms each (queue "default"), worked by 3 worker processes (concurrency 16,
    lease 2 s); while children remain, one random child worker is SIGKILLed every
    0.3–1.0 s, at most 10 kills, each replaced at once; guarded at 150 s.

    Invariants: exactly 1,000 child runs exist (none enqueued twice), every one completed
    and its effect ran (none lost — a child whose worker died is redelivered when its lease
    lapses, and its end still wakes the parent, in its own settle); the parent entered its
    body exactly twice — the fan-out that parked it, and the one resume its last child's
    end caused (no wake before that, none after) — and answers 1,000.
    """
    schema = fleet.schema
    rng = random.Random(20261201)
    alive: list[FerryProcess] = [
        await fleet.worker(lease_seconds=2, concurrency=16, extra=("--queues", "default"))
        for _ in range(WORKERS)
    ]
    await fleet.worker(lease_seconds=2, concurrency=4, extra=("--queues", "parents"))
    started = time.monotonic()
    parent = await enqueue(app.fan.definition, {"key": "p", "children": CHILDREN, "child_ms": 400})

    async def children_left() -> int:
        return sum(
            count
            for queue in await driver.stats()
            if queue.queue == "default"
            for state, count in queue.counts.items()
            if state != "completed"
        )

    async def fanned_out() -> bool:
        run = await driver.introspect.get_run(parent.job_id)
        return run is not None and run.children_count == CHILDREN

    await eventually(fanned_out, within_s=60, what="the parent's fan-out")
    kills = 0
    while kills < MAX_KILLS and await children_left() > 0:
        await asyncio.sleep(rng.uniform(0.3, 1.0))
        victim = alive.pop(rng.randrange(len(alive)))
        victim.process.kill()
        await victim.wait()
        kills += 1
        alive.append(
            await fleet.worker(
                lease_seconds=2, concurrency=16, extra=("--queues", "default"), ready=False
            )
        )

    last_seen: list[str] = []

    async def parent_done() -> bool:
        run = await driver.introspect.get_run(parent.job_id)
        if run is not None:  # what a failed wait reports: stuck, or only slow
            last_seen[:] = [
                f"parent {run.summary.state}, run at {run.summary.run_at_ms}, "
                f"{run.children_pending} of {run.children_count} children pending; "
                f"children not completed: {await children_left()}"
            ]
        return run is not None and run.summary.state == "completed"

    await eventually(
        parent_done,
        within_s=150,
        what="the parent completed",
        context=lambda: "\n".join([*last_seen, fleet.logs()]),
    )
    print(f"{CHILDREN} children, {kills} kills: done in {time.monotonic() - started:.1f} s")
    assert kills >= 3, "the chaos actually happened"

    run = await driver.introspect.get_run(parent.job_id)
    assert run is not None and run.result == CHILDREN
    assert (run.children_count, run.children_pending) == (CHILDREN, 0)
    children = await driver.introspect.list_runs(RunFilter(name="leaf", limit=CHILDREN + 1))
    assert len(children) == CHILDREN, "every child is one run"
    assert {c.state for c in children} == {"completed"}
    ran = await db.fetch(
        f"""SELECT job_key, count(*) AS ran FROM "{schema}".effects
            WHERE step = 'ran' GROUP BY job_key"""
    )
    assert len(ran) == CHILDREN, "every child's body ran"
    redelivered = sum(1 for row in ran if row["ran"] > 1)
    parent_effects = dict(
        await db.fetch(
            f"""SELECT step, count(*) FROM "{schema}".effects WHERE job_key = 'p'
                GROUP BY step"""
        )
    )
    assert parent_effects == {"entered": 2, "resumed": 1}
    print(f"{redelivered} children ran more than once (their worker was killed)")
