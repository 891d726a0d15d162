"""ferry: durable background work for Python on PostgreSQL.

The public surface is exactly what is imported here; everything else is internal.
"""

from ferry.errors import FerryError
from ferry.jobs import (
    AbortSignal,
    Concurrency,
    JobContext,
    JobHandle,
    Retry,
    Settled,
    Step,
    define_api,
    job,
    set_job_driver,
    throw_if_aborted,
    use_connection,
)
from ferry.tasks import task

__all__ = [
    "AbortSignal",
    "Concurrency",
    "FerryError",
    "JobContext",
    "JobHandle",
    "Retry",
    "Settled",
    "Step",
    "define_api",
    "job",
    "set_job_driver",
    "task",
    "throw_if_aborted",
    "use_connection",
]
