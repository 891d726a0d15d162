"""What every test suite shares: one place for each helper.

- ``support.plugin``: the shared fixtures (``postgres_dsn``, ``pg_schema``, ``clock``,
  ``driver``, ``harness``, ``db``, ``fleet``, ``cli_app``, ``seeded``).
- ``support.drivers``: the registry of driver kinds the conformance suite runs on.
- ``support.waiting``: ``eventually``, the one bounded wait for a condition, and
  ``blocked_in``, the defined point to assert that something has *not* happened.
- ``support.processes``: ``ferry`` as a real process — one command, or a role kept
  running (``Fleet``) — and free ports.

Importable as ``support`` from every suite: ``tests/`` is the root the suites are imported
from.
"""
