"""The stores written once over named statements, for every driver that has them.

Postgres and SQLite keep the same tables with the same columns, so every store that is a
statement per operation (leases, records, slots, steps, the outbox's relay side,
introspection, transfer, prune) is Python here, over a driver's ``Statements``: the
statement is called by name with named parameters, and each driver keeps only the text
where the dialects differ (``_postgres/sql/queries``, ``_sqlite/sql/queries``; the text
they agree on is in ``sql/`` here, each statement in one place). Redis answers the same
names with Lua scripts that take the same parameters and return the same rows
(``_redis/statements.py``), so a store that needs no transaction across statements runs
on it unchanged (introspection's actions and transfer's import, which do, are one script
each there: ``actions.py``, ``_redis.transfer``).
"""
