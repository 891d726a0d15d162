"""Backfill checkpoints on every driver: a failed attempt resumes from the last page that
landed, progress is on the run, and a worker that lost the run cannot move the checkpoint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from ferry._backfill import BackfillPage, backfill
from ferry._backfill.ledger import BackfillCheckpoint, BackfillLedger
from ferry._jobs.policy import Retry
from ferry.drivers.protocol import JsonValue, Progress
from ferry.testing import Harness

SOURCE = list(range(1, 26))
FETCHED: list[JsonValue] = []
COPIED: list[int] = []
FAIL_ON_PAGE_AT: set[int] = set()


class Pass(BaseModel):
    label: str


async def fetch(input: Pass, cursor: JsonValue) -> BackfillPage:
    FETCHED.append(cursor)
    start = int(cursor or 0)
    items = SOURCE[start : start + 10]
    return BackfillPage(items, start + len(items) if start + len(items) < len(SOURCE) else None)


async def copy(input: Pass, items: Sequence[Any]) -> None:
    if items[0] in FAIL_ON_PAGE_AT:
        FAIL_ON_PAGE_AT.discard(items[0])
        raise ConnectionError("the target database went away")
    COPIED.extend(items)


async def total(input: Pass) -> int:
    return len(SOURCE)


copy_numbers = backfill(
    input=Pass,
    idempotency_key=lambda i: f"copy-numbers:{i.label}",
    page=fetch,
    handle=copy,
    total=total,
    retry=Retry(attempts=3),
    name="conformance.copy-numbers",
)


@pytest.fixture(autouse=True)
def _fresh() -> None:
    FETCHED.clear()
    COPIED.clear()
    FAIL_ON_PAGE_AT.clear()


async def test_a_failed_attempt_resumes_from_the_last_checkpoint_not_the_start(
    harness: Harness,
) -> None:
    FAIL_ON_PAGE_AT.add(21)  # the third page fails once

    enqueued = await harness.run_jobs(copy_numbers, {"label": "a"})

    run = await harness.driver.introspect.get_run(enqueued.job_id)
    assert run is not None
    assert (run.summary.state, run.summary.attempts) == ("completed", 2)
    assert FETCHED == [None, 10, 20, 20]  # attempt 2 starts at the checkpoint of page 2
    assert COPIED == SOURCE
    assert run.result == {"processed": 25, "pages": 3, "resumedFrom": 20}


async def test_progress_of_a_backfill_is_visible_on_its_run(harness: Harness) -> None:
    enqueued = await harness.run_jobs(copy_numbers, {"label": "b"})

    run = await harness.driver.introspect.get_run(enqueued.job_id)
    assert run is not None
    assert run.progress == Progress(25, 25)


async def test_a_completed_backfill_key_does_not_run_its_pages_again(harness: Harness) -> None:
    await harness.run_jobs(copy_numbers, {"label": "c"})
    ledger = BackfillLedger(harness.driver)
    saved = await ledger.load("copy-numbers:c")
    assert saved is not None and saved.done

    FETCHED.clear()
    await harness.run_jobs(copy_numbers, {"label": "c"})  # deduplicated on the key
    assert FETCHED == []


async def test_a_worker_that_no_longer_holds_the_run_cannot_move_its_checkpoint(
    harness: Harness,
) -> None:
    ledger = BackfillLedger(harness.driver)
    with harness.installed():
        enqueued = await copy_numbers.enqueue({"label": "d"})
    checkpoint = BackfillCheckpoint("copy-numbers:d", 10, 10, 1, False, 0)

    assert not await ledger.save(checkpoint, job_id=enqueued.job_id, worker_id="stale")
    assert await ledger.load("copy-numbers:d") is None
