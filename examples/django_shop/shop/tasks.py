"""The shop's scheduled task: a report every night (found by ferry.contrib.django)."""

from ferry import task
from shop.jobs import daily_report

nightly_report = task(
    cron="0 2 * * *",
    tz="Europe/Berlin",
    enqueue=lambda occurrence_ms: [(daily_report, {"occurrence_ms": occurrence_ms})],
)
