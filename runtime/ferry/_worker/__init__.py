"""The worker role: claim, execute, heartbeat, drain."""

from ferry._jobs.policy import Caps
from ferry._worker.drain import run_until_signalled
from ferry._worker.worker import JobWorker, job_worker

__all__ = ["Caps", "JobWorker", "job_worker", "run_until_signalled"]
