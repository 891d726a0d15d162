"""A run's result: stored from what its body returned, read back typed by its job.

The body's return value is the run's result (the spec's ``settled.result``). It is stored
by the attempt's settle as JSON, under the same rules and limit as an input
(``max_payload_bytes``); ``handle.result(job_id)`` waits for the run to end and reads it
back as the body's return annotation declares. The wait listens to the driver's news of
runs ending (``RunResults.news``: NOTIFY, pub/sub, the SQLite watcher) and reads the run
again at least every idle poll, so it never spins and never misses an end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ferry._clock import Clock
from ferry._duration import Duration, to_ms
from ferry._jobs.definition import JobDefinition
from ferry._jobs.verdict import NoRetry
from ferry._payload import JsonValue, to_json_text
from ferry.drivers._refusals import run_not_found
from ferry.drivers.capabilities import RESULTS, need
from ferry.drivers.protocol import STATUS_BATCH, JobDriver, RunResults, RunStatus
from ferry.errors import FerryError


def stored_result(definition: JobDefinition[Any, Any], value: Any, *, max_bytes: int) -> JsonValue:
    """What a completed body returned, as the JSON its run keeps.

    A result that cannot be stored (no JSON form, too deep, over ``max_bytes``) fails the
    attempt with that refusal as the run's error, and the run goes dead at once
    (``NoRetry``): the body has done its work, and a retry would only return the same
    value again."""
    try:
        data, _ = to_json_text(value, what=f'job "{definition.name}" result', max_bytes=max_bytes)
    except FerryError as refused:
        raise NoRetry(refused.code, refused.message, refused.fix) from None
    return data


async def statuses(results: RunResults, job_ids: Sequence[str]) -> list[RunStatus | None]:
    """The runs' statuses, in order, read ``STATUS_BATCH`` at a time."""
    found: list[RunStatus | None] = []
    for start in range(0, len(job_ids), STATUS_BATCH):
        found += await results.statuses(job_ids[start : start + STATUS_BATCH])
    return found


async def ended(
    results: RunResults, clock: Clock, job_ids: Sequence[str], *, deadline_ms: int
) -> list[RunStatus | None]:
    """The runs' statuses once every one has ended (or is gone), or as they stand at
    ``deadline_ms`` (on ``clock``): read, then woken by news of one of them ending, or by
    the idle poll, and read again."""
    news = results.news()
    watch = news.watch(job_ids)  # before the first read: an end in between is not missed
    try:
        while True:
            now = await statuses(results, job_ids)
            if all(status is None or status.ended for status in now):
                return now
            left = deadline_ms - clock.now_ms()
            if left <= 0:
                return now
            await watch.wait(min(left, news.idle_poll_ms))
    finally:
        watch.close()


async def run_status(
    driver: JobDriver, definition: JobDefinition[Any, Any], job_id: str
) -> RunStatus:
    """``handle.status``: where run ``job_id`` of this job stands."""
    results = need(driver, RESULTS, by=f'job "{definition.name}".status()')
    [status] = await results.statuses([job_id])
    return _of_job(definition, job_id, status)


async def run_result(
    driver: JobDriver,
    definition: JobDefinition[Any, Any],
    job_id: str,
    *,
    timeout: Duration,  # noqa: ASYNC109 (a wait on the driver's clock, not asyncio's)
) -> Any:
    """``handle.result``: run ``job_id``'s result once it completed, typed."""
    timeout_ms = to_ms(timeout, what=f'job "{definition.name}".result() timeout')
    deadline_ms = driver.clock.now_ms() + timeout_ms  # measured from the call
    results = need(driver, RESULTS, by=f'job "{definition.name}".result()')
    [first] = await results.statuses([job_id])
    status = _of_job(definition, job_id, first)
    if not status.ended:
        [later] = await ended(results, driver.clock, [job_id], deadline_ms=deadline_ms)
        status = _of_job(definition, job_id, later)
    job = f'run {job_id} of job "{definition.name}"'
    if status.state == "completed":
        return definition.read_result(status.result, job_id=job_id)
    if status.state == "cancelled":
        raise FerryError(
            "X_JOB_CANCELLED",
            f"{job} was cancelled, so it has no result"
            + (f" ({status.last_error.message})" if status.last_error is not None else ""),
            f"retry it with `ferry jobs retry {job_id}` if it should run after all",
        )
    if status.state == "dead":
        error = status.last_error
        raise FerryError(
            error.code if error is not None else "X_JOB_FAILED",
            f"{job} is dead after {status.attempts} attempt(s): "
            + (error.message if error is not None else "no error was recorded"),
            f"see `ferry jobs show {job_id}`; once the cause is fixed, `ferry jobs retry "
            f"{job_id}` runs it again",
        )
    raise FerryError(
        "X_RESULT_TIMEOUT",
        f"{job} is still {status.state} after {timeout_ms:,} ms (attempts so far: "
        f"{status.attempts} of {status.max_attempts})",
        "wait longer (timeout=...), or read it later with handle.status(); the run itself goes on",
    )


def _of_job(
    definition: JobDefinition[Any, Any], job_id: str, status: RunStatus | None
) -> RunStatus:
    """``status``, refusing a run no longer (or never) stored, and one of another job."""
    if status is None:
        raise run_not_found(job_id)
    if status.name != definition.name:
        raise FerryError(
            "X_INVARIANT",
            f'run {job_id} is of job "{status.name}", not of job "{definition.name}"',
            f'read it through job "{status.name}"\'s handle, whose result type it has',
        )
    return status
