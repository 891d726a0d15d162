"""What an execution reports as it goes: the seam for metrics, logs and the test trace."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ferry.drivers.protocol import ClaimedJob, NackOutcome

ExecutionOutcome = Literal[
    "completed",  # acked
    "retried",  # attempt failed, another is scheduled
    "dead",  # attempt failed with none left: dead-lettered
    "interrupted",  # drain aborted it; attempt given back
    "slept",  # step.sleep parked it; attempt given back
    "deferred",  # concurrency slot busy (or job unknown here); attempt given back
    "cancelled",  # an operator cancelled it
    "lease-lost",  # the lease lapsed under it (or its settle could not be sent); nothing settled
    "superseded",  # the fence refused its settle or a step write: another worker holds the run
    "abandoned",  # the worker stopped waiting (drain deadline); nothing settled
]


REPORTED: Mapping[NackOutcome, ExecutionOutcome] = {
    "retry": "retried",
    "dead": "dead",
    "interrupted": "interrupted",
    "sleep": "slept",
    "deferred": "deferred",
    "cancelled": "cancelled",
}
"""How each settle that did not complete an attempt is reported (metrics, logs, traces)."""


@dataclass(frozen=True, slots=True)
class ExecutionReport:
    """How one claimed attempt ended, and whether its settle landed."""

    job_id: str
    job_name: str
    queue: str
    attempt: int
    outcome: ExecutionOutcome
    code: str | None
    message: str | None
    duration_ms: int
    landed: bool


class ExecutionObserver:
    """Hooks ``execute_job`` calls (and the worker, as it starts an attempt); every one is
    a no-op until overridden."""

    def execution_started(self, claimed: ClaimedJob) -> None:
        """A claimed attempt is starting (the worker calls it as it spawns the attempt)."""

    def step_executed(self, job_name: str, job_id: str, step_name: str) -> None:
        """A step's function actually ran (a replay from storage is not reported)."""

    def heartbeat_failed(self, job_name: str, job_id: str, queue: str, error: str) -> None:
        """One lease renewal did not land; the window may still hold."""

    def lease_lost(self, job_name: str, job_id: str, queue: str) -> None:
        """The attempt's lease lapsed (reported once per lapse): a whole window passed with
        no renewal landing, the fence refused one of its writes, or its settle could not
        be sent."""

    def execution_finished(self, report: ExecutionReport) -> None:
        """The attempt ended (settled or not)."""

    def rate_limited(self, job_name: str, job_id: str, queue: str, until_ms: int) -> None:
        """A claim deferred the run to ``until_ms``: its rate limit had no room (never
        leased, no attempt counted)."""
