"""Job drivers: where runs are stored. ``set_job_driver`` swaps them without touching jobs."""

from ferry.drivers.memory import memory_job_driver
from ferry.drivers.postgres import postgres_job_driver
from ferry.drivers.protocol import JobDriver

__all__ = ["JobDriver", "memory_job_driver", "postgres_job_driver"]
