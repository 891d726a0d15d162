"""The in-process driver: every ``JobDriver`` member over plain dictionaries."""

from ferry.drivers._memory.driver import MemoryJobDriver, memory_job_driver

__all__ = ["MemoryJobDriver", "memory_job_driver"]
