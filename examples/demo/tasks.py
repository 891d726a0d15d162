"""The demo's schedules."""

from __future__ import annotations

from examples.demo.jobs import send_digest
from ferry import task

nightly_digest = task(
    cron="0 3 * * *",
    tz="Europe/Berlin",
    # The occurrence, never the wall clock: a catch-up tick runs long after its instant.
    enqueue=lambda occurrence_ms: [(send_digest, {"occurrence_ms": occurrence_ms})],
)
