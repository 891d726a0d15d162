"""One log line when a run starts and one when it settles: what ``ferry dev`` shows.

A production worker says nothing per run (its metrics count them; a line per run would be
the largest cost of a busy log pipeline); on a laptop, seeing each run start and end is
the point.
"""

from __future__ import annotations

import logging

from ferry._jobs.observer import ExecutionObserver, ExecutionReport
from ferry.drivers.protocol import ClaimedJob

logger = logging.getLogger("ferry.runs")


class RunLog(ExecutionObserver):
    """Logs ``jobs.run.started`` (job, id, attempt) and ``jobs.run.settled`` (job, id,
    outcome, duration) at INFO."""

    def execution_started(self, claimed: ClaimedJob) -> None:
        logger.info(
            "jobs.run.started",
            extra={"job": claimed.name, "job_id": claimed.id, "attempt": claimed.attempt},
        )

    def execution_finished(self, report: ExecutionReport) -> None:
        logger.info(
            "jobs.run.settled",
            extra={
                "job": report.job_name,
                "job_id": report.job_id,
                "outcome": report.outcome,
                "duration_ms": report.duration_ms,
            },
        )
