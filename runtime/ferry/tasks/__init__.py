"""Scheduled tasks: cron triggers that enqueue jobs, and the cron and zone rules they use.

``parse_cron``, ``validate_zone``, ``occurrences`` and ``next_occurrences`` are public so
that other tools (the Kubernetes operator) refuse exactly what the runtime refuses.
"""

from ferry.tasks._cron import CronExpression, describe_cron, parse_cron
from ferry.tasks._declaration import TaskHandle, task
from ferry.tasks._occurrences import next_occurrences, occurrences, validate_zone

__all__ = [
    "CronExpression",
    "TaskHandle",
    "describe_cron",
    "next_occurrences",
    "occurrences",
    "parse_cron",
    "task",
    "validate_zone",
]
