"""Scheduled tasks: cron triggers that enqueue jobs."""

from ferry.tasks.declaration import TaskHandle, task
from ferry.tasks.occurrences import occurrences

__all__ = ["TaskHandle", "occurrences", "task"]
