"""The worker role: claim, execute, heartbeat, drain."""

from ferry.worker.worker import JobWorker, job_worker

__all__ = ["JobWorker", "job_worker"]
