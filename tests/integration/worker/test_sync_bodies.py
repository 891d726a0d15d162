"""A sync body that blocks its thread for seconds stalls nothing else: the worker's leases
are renewed, other runs are claimed and completed, and ``/livez`` answers, until it lets go.

The body blocks on a file lock the test holds, so it blocks exactly as long as the test
says; every check waits for an event (a renewal landing, a run completing), never for time.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest
from support.processes import Fleet
from support.waiting import eventually

from ferry import job_worker
from ferry._clock import FrozenClock
from ferry.drivers import PostgresJobDriver

from . import app


@pytest.fixture
def clock() -> FrozenClock:
    """Frozen: the in-process worker's heartbeats fall due only when the test advances it."""
    return FrozenClock()


class HeldLock:
    """A file the test holds an exclusive lock on until ``release()`` (or the test ends)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.touch()
        self._file = open(path, "rb")  # noqa: SIM115 — held across the test
        fcntl.flock(self._file, fcntl.LOCK_EX)

    def release(self) -> None:
        if not self._file.closed:
            self._file.close()  # closing the description drops its lock


@pytest.fixture
def held_lock(tmp_path: Path) -> Iterator[HeldLock]:
    held = HeldLock(tmp_path / "hold")
    yield held
    held.release()


def _armed(clock: FrozenClock, deadline_ms: int) -> bool:
    """Whether something sleeps on ``clock`` until ``deadline_ms`` (the keeper's next beat):
    advancing before it sleeps again would pass its interval unseen."""
    return any(at == deadline_ms and not waiting.done() for at, _, waiting in clock._sleepers)


async def _run(db: asyncpg.Connection, schema: str, job_id: str) -> asyncpg.Record:
    row: asyncpg.Record = await db.fetchrow(
        f'SELECT state, lease_expires_at_ms FROM "{schema}".jobs WHERE id = $1', int(job_id)
    )
    return row


async def test_a_blocking_sync_body_lets_heartbeats_and_other_runs_go_on(
    driver: PostgresJobDriver, clock: FrozenClock, db: asyncpg.Connection, held_lock: HeldLock
) -> None:
    # An interval no other timer of the worker shares, so waiting for a sleeper due one
    # interval from now waits for the keeper itself (not, say, a 10 s poll).
    worker = job_worker(
        driver=driver,
        jobs=[app.hold_file, app.noop],
        concurrency=2,
        lease_ms=30_000,
        heartbeat_interval_ms=7_000,
    )
    await worker.start()
    try:
        hold = await app.hold_file.enqueue({"path": str(held_lock.path)})
        started = Path(f"{held_lock.path}.started")
        await eventually(started.exists, what="the sync body to block on its thread")
        lease = (await _run(db, driver.schema, hold.job_id))["lease_expires_at_ms"]
        for renewal in (1, 2, 3):  # one heartbeat interval at a time
            await eventually(
                lambda: _armed(clock, clock.now_ms() + 7_000),
                what="the lease keeper waiting for its next interval",
            )
            clock.advance("7s")

            async def renewed(expected: int = lease + renewal * 7_000) -> bool:
                row = await _run(db, driver.schema, hold.job_id)
                return bool(row["lease_expires_at_ms"] == expected)

            await eventually(renewed, what=f"heartbeat {renewal} landing while the body blocks")

        other = await app.noop.enqueue({"n": 1})

        async def other_completed() -> bool:
            return bool((await _run(db, driver.schema, other.job_id))["state"] == "completed")

        await eventually(other_completed, what="another run completing while the body blocks")
        assert (await _run(db, driver.schema, hold.job_id))["state"] == "running"

        held_lock.release()

        async def hold_completed() -> bool:
            return bool((await _run(db, driver.schema, hold.job_id))["state"] == "completed")

        await eventually(hold_completed, what="the sync body completing once let go")
    finally:
        held_lock.release()  # stop() waits for the body: never leave it blocked
        await worker.stop()


async def test_livez_answers_while_a_sync_body_blocks_its_thread_for_seconds(
    driver: PostgresJobDriver, fleet: Fleet, db: asyncpg.Connection, held_lock: HeldLock
) -> None:
    """The process on the real clock: a 0.5 s loop-lag budget that a blocked loop would blow
    at once, checked after three lease renewals (2 s leases) landed while the body held."""
    worker = await fleet.worker(lease_seconds=2, extra=["--loop-lag-budget-seconds", "0.5"])
    hold = await app.hold_file.enqueue({"path": str(held_lock.path)})
    await eventually(Path(f"{held_lock.path}.started").exists, what="the sync body to block")
    seen: set[int] = set()

    async def three_renewals() -> bool:
        seen.add((await _run(db, driver.schema, hold.job_id))["lease_expires_at_ms"])
        return len(seen) >= 4

    await eventually(three_renewals, within_s=20, what="three renewals while the body blocks")
    assert (await worker.http("/livez"))[0] == 200, "the event loop never stalled"
    assert await worker.metric("job_runs_in_flight") == 1
    held_lock.release()

    async def completed() -> bool:
        return bool((await _run(db, driver.schema, hold.job_id))["state"] == "completed")

    await eventually(completed, within_s=20, what="the sync body completing once let go")
