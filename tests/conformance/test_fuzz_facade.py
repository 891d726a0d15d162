"""Property: any declaration and any enqueue through the facade, on every driver, is an
``X_*`` refusal or a success; a refused enqueue stored nothing, and every run that was
stored is claimed and completed by the worker — no later claim fails for anything an
earlier caller passed (a float priority once broke every claim on memory and Redis).

Budget: 80 random declarations-and-enqueues per driver, each drained by the worker.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from support.fuzz import numbers, words

from ferry import FerryError, Retry, job
from ferry.drivers.protocol import RunFilter
from ferry.testing import Harness


class Note(BaseModel):
    text: str


_serial = itertools.count()
floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([1e15, 1e300, -0.5])
durations = (
    numbers
    | floats
    | words
    | st.sampled_from(["1h", "36500d", "36501d", "1e20d"])
    | st.builds(timedelta, seconds=st.floats(min_value=0, max_value=1e12))
    | st.just(timedelta.max)
)
instants = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)).flatmap(
    lambda naive: st.sampled_from(
        [naive, naive.replace(tzinfo=UTC), naive.replace(tzinfo=timezone(timedelta(hours=-14)))]
    )
)
# Each setting is a usable value half the time, anything at all the other half, so both
# the refusals and the runs that must then complete are well drawn.
usable_durations = st.sampled_from(["1s", "250ms", "2h", 0, 1, 0.5, timedelta(seconds=3)])
declarations = st.fixed_dictionaries(
    {},
    optional={
        "priority": st.integers(-10, 10) | st.one_of(numbers, floats, words, st.booleans()),
        "retry": st.tuples(st.integers(1, 5) | (numbers | words), usable_durations | durations),
        "timeout": usable_durations | durations,
        "queue": st.sampled_from(["default", "mail"]) | words,
    },
)
enqueues = st.fixed_dictionaries(
    {"text": words},
    optional={
        "delay": usable_durations | durations,
        "run_at": instants,
        "queue": st.sampled_from(["default", "mail"]) | words,
    },
)


async def _runs(harness: Harness) -> list[Any]:
    return list(await harness.driver.introspect.list_runs(RunFilter(limit=500)))


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(declared=declarations, enqueued=enqueues)
async def test_any_declaration_and_enqueue_is_refused_or_stored_and_then_completed(
    harness: Harness, declared: dict[str, Any], enqueued: dict[str, Any]
) -> None:
    options = dict(declared)
    if "retry" in options:
        attempts, base = options.pop("retry")
        try:
            options["retry"] = Retry(attempts=attempts, base=base, max=base)
        except FerryError as refused:
            event(f"Retry: {refused.code}")
            assert refused.code.startswith("X_") and refused.fix
            return

    async def body(input: Note) -> str:
        return input.text

    name = f"fuzz.facade.{next(_serial)}"
    try:
        handle = job(input=Note, idempotency_key=lambda i: f"note:{i.text}", name=name, **options)(
            body
        )
    except FerryError as refused:
        event(f"job: {refused.code}")
        assert refused.code.startswith("X_") and refused.fix
        return
    text = enqueued.pop("text")
    before = await _runs(harness)
    try:
        result = await handle.enqueue({"text": text}, **enqueued)
    except FerryError as refused:
        event(f"enqueue: {refused.code}")
        assert refused.code.startswith("X_") and refused.fix
        assert await _runs(harness) == before, "a refused enqueue stored a run"
        return
    event("stored")
    await harness.drain()  # every due run, this one included, runs to its end
    run = await harness.driver.introspect.get_run(result.job_id)
    assert run is not None
    due = run.summary.run_at_ms <= harness.driver.clock.now_ms()
    assert run.summary.state == ("completed" if due else "queued"), run.summary
    if run.summary.state == "completed":
        assert run.result == text
