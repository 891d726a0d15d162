"""The PostgreSQL driver: every store in one schema, one statement per operation.

``driver`` wires the pieces; each mechanism has its own module: ``database`` (the pool and
lazy open), ``migrate`` (versioned SQL), ``queries`` (named SQL), ``wake`` (the one LISTEN
session), and one module per store: ``steps``, ``leases``, ``introspect``, ``scheduler``,
``outbox``, ``webhooks``, ``backfills``.
"""

from ferry.drivers._postgres.driver import PostgresJobDriver, postgres_job_driver

__all__ = ["PostgresJobDriver", "postgres_job_driver"]
