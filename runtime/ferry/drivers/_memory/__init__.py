"""The in-process driver: the SQLite driver on an in-memory database."""

from ferry.drivers._memory.driver import MemoryJobDriver, memory_job_driver

__all__ = ["MemoryJobDriver", "memory_job_driver"]
