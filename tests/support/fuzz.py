"""What the boundary fuzz tests type at ferry: words that sit on a bound, past one, or are
not what the field wants at all (huge numbers, durations past 100 years, NUL, lone
surrogates, escapes), mixed with random text and numbers."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ferry._clock import FrozenClock
from ferry._jobs.declaration import JobHandle
from ferry.drivers.protocol import JobDriver
from ferry.testing import Harness

EDGES = [
    "0",
    "-1",
    "1",
    "00",
    "500",
    "501",
    "2147483648",
    "9223372036854775807",
    "9223372036854775808",
    "9" * 5_000,
    "1e999",
    "inf",
    "nan",
    "-0",
    "1.5",
    "1e20d",
    "36500d",
    "36501d",
    "99999999999999999999d",
    "5m",
    "0s",
    "forever",
    "",
    " ",
    "\x00",
    "a\x00b",
    "\udcff",
    "\x1b[31m",
    "²",
    "2026-11-30T09:00:00Z",
    "0001-01-01",
    "9999-12-31T23:59:59Z",
    "cli.nightly",
    "cli.greet",
    "default",
    "later",
    "dead",
    "queued",
]
words = st.sampled_from(EDGES) | st.text(max_size=12)
"""Any word; the CLI test filters out what its own table rendering cannot take yet."""
numbers = st.sampled_from([0, -1, 1, 5, 100, 101, 500, 501, 2**31, 2**63, 10**20, -(2**63)]) | (
    st.integers(min_value=-(2**70), max_value=2**70)
)
"""Whole numbers around every bound a count, page or id has."""


async def normal_run_state(driver: JobDriver, job: JobHandle[Any, Any], input: Any) -> str:
    """Enqueue ``input`` for ``job`` and let a worker drain ``driver``: the state the run
    ends in (what every fuzz test asks afterwards: ``completed``, the worker still works).
    The run goes to a queue of its own: a fuzz may well have paused the job's queue."""
    clock = driver.clock
    assert isinstance(clock, FrozenClock), "the suites' drivers run on a frozen clock"
    harness = Harness(driver=driver, clock=clock, tasks=[])
    with harness.installed():
        done = await job.enqueue(input, queue="after-the-fuzz")
        await harness.drain()
    run = await driver.introspect.get_run(done.job_id)
    assert run is not None
    return run.summary.state
