"""The app of the killed-leader test: the every-minute app's job, fired by one task whose
occurrences never come due on their own while a test runs (midnight UTC, New Year's Day).

Only the test makes an occurrence due: once the leader is dead, it moves the task's
last-tick row back to just before the latest New Year — the state the row is in when an
occurrence passes while nobody live leads — so no scheduler can have fired it before.
"""

from __future__ import annotations

from ferry import task
from scheduler.scheduler_app import record_minute

new_year = task(
    cron="0 0 1 1 *",
    tz="UTC",
    catch_up="run-all",
    enqueue=lambda occurrence_ms: [(record_minute, {"occurrence_ms": occurrence_ms})],
)

__all__ = ["new_year", "record_minute"]
