"""``ctx``: what a job body knows about the run it is executing."""

from __future__ import annotations

from dataclasses import dataclass

from ferry._jobs.signal import AbortSignal


@dataclass(frozen=True, slots=True)
class JobContext:
    """The run being executed; ``signal`` aborts on timeout, drain, cancel or lease loss."""

    signal: AbortSignal
    job_id: str
    name: str
    queue: str
    attempt: int
    max_attempts: int
    final_attempt: bool
    tenant: str | None
    actor: str | None
    idempotency_key: str
    worker_id: str
