"""The worker role: claim, execute, heartbeat, drain."""

from ferry._jobs.policy import Caps
from ferry._worker.worker import JobWorker, job_worker

__all__ = ["Caps", "JobWorker", "job_worker"]
