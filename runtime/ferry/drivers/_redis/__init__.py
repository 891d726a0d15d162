"""The Redis driver: every store under one key prefix, one Lua script per operation.

``driver`` wires the pieces; each mechanism has its own module: ``connection`` (the client,
lazy open, refusals), ``keyspace`` (the prefix and key names), ``scripts`` (the named Lua
scripts in ``lua/``), ``wake`` (the one pub/sub session), and one module per store:
``steps``, ``leases``, ``introspect``, ``scheduler``, ``outbox``, ``webhooks``,
``backfills``.
"""

from ferry.drivers._redis.driver import RedisJobDriver, redis_job_driver

__all__ = ["RedisJobDriver", "redis_job_driver"]
