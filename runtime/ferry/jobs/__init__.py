"""Jobs: declaration, the enqueue facade, and the one execution path."""

from ferry.jobs.context import JobContext
from ferry.jobs.declaration import JobHandle, Settled, job
from ferry.jobs.execute import execute_job
from ferry.jobs.facade import set_job_driver, use_connection
from ferry.jobs.policy import Concurrency, Retry
from ferry.jobs.registry import Api, define_api
from ferry.jobs.signal import AbortSignal, throw_if_aborted
from ferry.jobs.step import Step

__all__ = [
    "AbortSignal",
    "Api",
    "Concurrency",
    "JobContext",
    "JobHandle",
    "Retry",
    "Settled",
    "Step",
    "define_api",
    "execute_job",
    "job",
    "set_job_driver",
    "throw_if_aborted",
    "use_connection",
]
