"""The worker role: claim, execute, heartbeat, drain."""

from ferry.jobs.policy import Caps
from ferry.worker.drain import run_until_signalled
from ferry.worker.worker import JobWorker, job_worker

__all__ = ["Caps", "JobWorker", "job_worker", "run_until_signalled"]
