"""The SQLite driver: every store in one file, every process on the host sharing it.

``driver`` wires the pieces; each mechanism has its own module: ``target`` (path or URL),
``connection`` (``sqlite3`` on a thread, refusals), ``database`` (writer, reader, lazy
open), ``migrate`` (versioned SQL), ``runs`` (fence, settle rules, enqueue batches),
``wake`` (the commit watcher), ``joined`` (the application's connection), and one module
per store: ``steps``, ``leases``, ``introspect``, ``scheduler``, ``outbox``, ``webhooks``,
``backfills``.
"""

from ferry.drivers._sqlite.driver import SqliteJobDriver, sqlite_job_driver

__all__ = ["SqliteJobDriver", "sqlite_job_driver"]
