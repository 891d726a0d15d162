"""The Redis driver: every store under one key prefix, one Lua script per operation.

``driver`` wires the pieces; each mechanism has its own module: ``connection`` (the client,
lazy open, refusals), ``keyspace`` (the prefix and key names), ``scripts`` (the named Lua
scripts in ``lua/``), ``wake`` (the one pub/sub session), and one module per store:
``steps``, ``leases``, ``introspect``, ``scheduler``, ``outbox``, ``webhooks``,
``backfills``.
"""

from ferry._extras import require_extra

require_extra("redis", feature="the Redis driver (redis_job_driver, a redis:// URL)")

from ferry.drivers._redis.driver import RedisJobDriver, redis_job_driver  # noqa: E402

__all__ = ["RedisJobDriver", "redis_job_driver"]
