"""Repeated ``kill -9`` of a real ``ferry jobs drain``: nothing lost, nothing duplicated,
nothing runnable in two stores at once, and a rerun finishes the move faithfully."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from support.processes import REPO
from support.waiting import eventually

from ferry.drivers import PostgresJobDriver, postgres_job_driver
from ferry.drivers.protocol import (
    ClaimOptions,
    EnqueueRequest,
    JobError,
    NackOptions,
    NackOutcome,
    StepRecord,
)

QUEUED = 6_000
RETRYING = 300
"""Queued runs that already ran an attempt: one step recorded, an error, attempts 1."""
DEAD = 300
IN_FLIGHT = 100
"""Running and sleeping runs (half each): a drain never moves them."""
BATCH = 25
MAX_KILLS = 40
APP_NAME = "ferry-drain-under-test"
"""The drain's connections carry this ``application_name``, so the test can wait for the
server to have finished with a killed process's sessions before it reads."""

# Every column a faithful move keeps (ids and updated_at are the target's own).
KEPT = """idempotency_key, name, queue, payload::text, state, attempts, max_attempts, priority,
          run_at_ms, tenant, actor, concurrency_key, last_error_code, last_error_message,
          progress_current, progress_total, created_at_ms, finished_at_ms,
          (SELECT coalesce(json_agg(json_build_object('n', s.name, 'k', s.kind, 'r', s.result,
                                                      'f', s.finished_at_ms)
                                    ORDER BY s.started_at_ms, s.seq), '[]')::text
           FROM {schema}.steps AS s WHERE s.job_id = j.id) AS steps"""


@pytest.fixture
async def stores(
    postgres_dsn: str, new_pg_schema: Callable[[], str]
) -> AsyncIterator[tuple[PostgresJobDriver, str]]:
    """The source driver (seeded by the test) and the target's schema name."""
    source = postgres_job_driver(postgres_dsn, schema=new_pg_schema())
    await source.open()
    yield source, new_pg_schema()
    await source.close()


def request(key: str, n: int, *, run_at_ms: int) -> EnqueueRequest:
    return EnqueueRequest(
        name=f"chaos.job{n % 3}",
        queue=("default", "mail", "reports")[n % 3],
        payload={"n": n, "key": key, "tags": ["a", n % 7], "ratio": n / 7},
        idempotency_key=key,
        max_attempts=3 + n % 4,
        run_at_ms=run_at_ms,
        tenant=f"tenant-{n % 5}",
        actor=f"user-{n % 11}" if n % 2 else None,
        concurrency_key=f"chaos.job{n % 3}:acct-{n % 13}" if n % 4 == 0 else None,
        priority=n % 3,
    )


async def seed(source: PostgresJobDriver) -> None:
    """Runs in every state: in flight (stay), dead and retrying with steps, plain queued."""
    now = source.clock.now_ms()

    async def claimed(prefix: str, count: int) -> list[str]:
        await source.enqueue_many([request(f"{prefix}{n}", n, run_at_ms=now) for n in range(count)])
        runs = await source.claim(ClaimOptions("seeder", 3_600_000, limit=count))
        assert len(runs) == count
        return [run.id for run in runs]

    half = IN_FLIGHT // 2
    sleeping = await claimed("sleeping-", half)
    await source.settle_many(
        [(i, NackOptions("seeder", "sleep", run_at_ms=now + 86_400_000)) for i in sleeping]
    )
    await claimed("running-", half)
    outcomes: tuple[tuple[str, NackOutcome, int], ...] = (
        ("dead-", "dead", DEAD),
        ("retrying-", "retry", RETRYING),
    )
    for prefix, outcome, count in outcomes:
        ids = await claimed(prefix, count)
        for i in ids:
            step = StepRecord("first", "run", {"done": i}, now, now + 3)
            assert await source.steps.record(i, step, worker_id="seeder")
        error = JobError("X_JOB_FAILED", f"{prefix} attempt failed")
        await source.settle_many(
            [(i, NackOptions("seeder", outcome, run_at_ms=now + 60_000, error=error)) for i in ids]
        )
    await source.enqueue_many(
        [
            request(f"queued-{n}", n, run_at_ms=now + (3_600_000 if n % 10 == 0 else 0))
            for n in range(QUEUED)
        ]
    )


async def rows(db: asyncpg.Connection, schema: str) -> dict[str, dict[str, Any]]:
    """Every run of ``schema`` by idempotency key, with the columns a move keeps."""
    quoted = f'"{schema}"'
    query = f"SELECT {KEPT.format(schema=quoted)} FROM {quoted}.jobs AS j"
    return {row["idempotency_key"]: dict(row) for row in await db.fetch(query)}


def kill_point(source: dict[str, dict[str, Any]], target: dict[str, dict[str, Any]]) -> str:
    """Where the kill landed, read off the stores; asserts that no run was lost, none is in
    both stores unless its source row is ``moving`` (copied, not yet removed), and so none
    is runnable twice."""
    expected = QUEUED + RETRYING + DEAD + IN_FLIGHT
    keys = source.keys() | target.keys()
    assert len(keys) == expected, f"{expected - len(keys)} run(s) lost"
    both = source.keys() & target.keys()
    twice = [key for key in both if source[key]["state"] != "moving"]
    assert not twice, f"in both stores and runnable on the source: {twice[:5]}"
    moving_on_target = [key for key, row in target.items() if row["state"] == "moving"]
    assert not moving_on_target, "nothing is ever reserved on the target"
    reserved = [key for key, row in source.items() if row["state"] == "moving"]
    if not reserved:
        return "between batches"
    copied = sum(key in target for key in reserved)
    if copied == len(reserved):
        return "copied, not removed"
    return "reserved, not copied" if copied == 0 else "reserved and partly copied"


async def test_killing_a_drain_at_random_moments_loses_and_duplicates_nothing(
    stores: tuple[PostgresJobDriver, str], postgres_dsn: str, tmp_path: Path
) -> None:
    """Budget: 6,000 queued runs (a tenth delayed), 300 retrying with a recorded step, 300
    dead, 100 running or sleeping, drained in batches of 25 with --include-dead; the drain
    process is SIGKILLed at a random moment of its work, at most 40 times, each time
    restarted, until a run finishes; then the stores are compared.

    Invariants, checked after every kill (on the stores as the killed process left them):
    every run exists in the source or the target; a run in both is ``moving`` on the source
    (so it is runnable in one store only); nothing is ever ``moving`` on the target. At the
    end: every run exists exactly once; none is ``moving``; each moved run kept every field
    and step it had; the running and sleeping ones never left the source.
    """
    source, target_schema = stores
    await seed(source)
    rng = random.Random(20261201)
    separator = "&" if "?" in postgres_dsn else "?"
    dsn = f"{postgres_dsn}{separator}application_name={APP_NAME}"
    command = [
        sys.executable, "-m", "ferry", "jobs", "drain", "--json",
        "--from", dsn, "--from-schema", source.schema,
        "--to", dsn, "--to-schema", target_schema,
        "--include-dead", "--batch", str(BATCH),
    ]  # fmt: skip
    db = await asyncpg.connect(postgres_dsn)
    try:
        before = await rows(db, source.schema)

        async def sessions_gone() -> bool:
            count = await db.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", APP_NAME
            )
            return int(count) == 0

        async def moved_so_far() -> int:
            exists = await db.fetchval("SELECT to_regclass($1)", f'"{target_schema}".jobs')
            if exists is None:
                return 0
            return int(await db.fetchval(f'SELECT count(*) FROM "{target_schema}".jobs'))

        async def until_moving(process: asyncio.subprocess.Process, baseline: int) -> None:
            async def moving() -> bool:
                return process.returncode is not None or await moved_so_far() > baseline

            await eventually(moving, within_s=60, what="the drain to start moving runs")

        points: Counter[str] = Counter()
        started = time.monotonic()
        finished = None
        for attempt in range(MAX_KILLS):
            log = (tmp_path / f"drain-{attempt}.log").open("w")
            process = await asyncio.create_subprocess_exec(
                *command, cwd=REPO, stdout=log, stderr=log
            )
            if rng.random() < 0.8:  # most kills land mid-move, the rest anywhere from start
                await until_moving(process, await moved_so_far())
            await asyncio.sleep(rng.uniform(0, 0.12))
            if process.returncode is None:
                process.send_signal(signal.SIGKILL)
            code = await process.wait()
            log.close()
            if code == 0:
                finished = attempt
                break
            assert code == -signal.SIGKILL, (tmp_path / f"drain-{attempt}.log").read_text()
            await eventually(sessions_gone, within_s=30, what="the killed drain's sessions end")
            points[kill_point(await rows(db, source.schema), await rows(db, target_schema))] += 1
        kills = sum(points.values())
        if finished is None:
            done = await asyncio.create_subprocess_exec(
                *command, cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
            out, err = await done.communicate()
            assert done.returncode == 0, out.decode() + err.decode()
            envelope = json.loads(out)
            assert envelope["ok"] and envelope["data"]["leftOnSource"]["moving"] == 0
        print(
            f"{len(before)} runs, {kills} kills in {time.monotonic() - started:.1f} s; "
            f"kill points: {dict(points)}"
        )
        assert kills >= 5, "the chaos actually happened"
        assert (
            points["reserved, not copied"]
            + points["copied, not removed"]
            + points["reserved and partly copied"]
            >= 1
        ), "at least one kill left a batch in flight"

        after_source = await rows(db, source.schema)
        after_target = await rows(db, target_schema)
        assert not after_source.keys() & after_target.keys(), "a run exists twice"
        assert after_source.keys() | after_target.keys() == before.keys(), "a run was lost"
        stayed = {key for key, row in before.items() if row["state"] in ("running", "sleeping")}
        assert after_source.keys() == stayed
        assert all(after_source[key] == before[key] for key in stayed)
        for key, row in after_target.items():
            assert row == before[key], f"{key} changed in the move"
        assert Counter(row["state"] for row in after_target.values()) == {
            "queued": QUEUED + RETRYING,
            "dead": DEAD,
        }
    finally:
        await db.close()
