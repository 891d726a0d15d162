"""The PostgreSQL driver: durable runs in one schema, one statement per operation.

``driver`` wires the pieces; each mechanism has its own module: ``database`` (pool and
lazy open), ``migrate`` (versioned SQL), ``queries`` (named SQL), ``steps``, ``leases``,
``introspect``, and ``wake`` (the LISTEN session).
"""

from ferry.drivers._postgres.driver import PostgresJobDriver, postgres_job_driver
from ferry.drivers._postgres.wake import QueueWake

__all__ = ["PostgresJobDriver", "QueueWake", "postgres_job_driver"]
