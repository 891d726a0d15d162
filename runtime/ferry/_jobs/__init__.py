"""Jobs: declaration, the enqueue facade, and the one execution path."""

from ferry._jobs.context import JobContext
from ferry._jobs.declaration import JobHandle, job
from ferry._jobs.definition import Settled
from ferry._jobs.execute import execute_job
from ferry._jobs.facade import set_job_driver, use_connection
from ferry._jobs.policy import Concurrency, RateLimit, Retry
from ferry._jobs.signal import AbortSignal, throw_if_aborted
from ferry._jobs.step import Step, SyncStep

__all__ = [
    "AbortSignal",
    "Concurrency",
    "JobContext",
    "JobHandle",
    "RateLimit",
    "Retry",
    "Settled",
    "Step",
    "SyncStep",
    "execute_job",
    "job",
    "set_job_driver",
    "throw_if_aborted",
    "use_connection",
]
