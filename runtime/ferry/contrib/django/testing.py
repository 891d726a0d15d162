"""Testing a Django project's jobs: the harness on the test database, from sync tests.

``FerryHarness`` is ``ferry.testing.Harness`` on the project's Postgres driver, pointed at
the test database the runner created, with a frozen clock, installed as the job driver;
its calls are sync, as Django tests are (the async work runs on ferry's own loop thread,
where the driver's pool lives). ``drain()`` fires the tasks the app config discovered and
runs every due run through the real worker path — sync ORM bodies on the worker's threads,
each with its own Django connection.

The harness reads runs through its own connection, so they must be committed: use
``TransactionTestCase`` (pytest-django: ``transactional_db`` or
``@pytest.mark.django_db(transaction=True)``). Inside a test's open transaction
(``TestCase``, ``db``) ``drain()`` is refused, rather than finding nothing.

pytest-django: ``pytest_plugins = ["ferry.contrib.django.testing"]`` in ``conftest.py``
gives the ``ferry`` fixture.
"""

from __future__ import annotations

from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest

from ferry._bridge import run_sync
from ferry._clock import FrozenClock
from ferry._duration import Duration
from ferry._jobs.facade import set_job_driver
from ferry.contrib.django.apps import api, database_url
from ferry.contrib.django.settings import ferry_settings
from ferry.drivers import PostgresJobDriver, postgres_job_driver
from ferry.errors import FerryError
from ferry.testing import Harness, Trace

T = TypeVar("T")


class FerryHarness:
    """A frozen clock, the project's driver on the test database, a hand-cranked worker."""

    def __init__(self) -> None:
        from django.db import connections

        settings = ferry_settings()
        self._database = connections[settings.database]
        self.clock = FrozenClock()
        self.driver: PostgresJobDriver = postgres_job_driver(
            database_url(), schema=settings.schema, clock=self.clock
        )
        self.harness = Harness(
            driver=self.driver, clock=self.clock, tasks=list(api().tasks.values())
        )
        self._previous = set_job_driver(self.driver)
        self._run(self.driver.open())  # migrates ferry's schema in the test database

    def drain(self) -> Trace:
        """Fire due tasks, then run every due run (fast-forwarding retry backoff)."""
        if self._database.in_atomic_block:
            raise FerryError(
                "X_INVARIANT",
                "ferry's test harness drained inside the test's open transaction, where the "
                "runs the test enqueued are not committed, so it would find none",
                "use TransactionTestCase (pytest-django: the transactional_db fixture, or "
                "@pytest.mark.django_db(transaction=True))",
            )
        return self._run(self.harness.drain())

    def advance(self, by: Duration) -> int:
        """Move the frozen clock forward (``step.sleep``, ``delay`` and cron wait for it)."""

        async def advance() -> int:
            return self.clock.advance(by)

        return self._run(advance())

    def close(self) -> None:
        set_job_driver(self._previous)
        self._run(self.driver.close())

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        return run_sync(lambda: call, joined=False, what="ferry's Django test harness")


@pytest.fixture
def ferry(transactional_db: None) -> Iterator[FerryHarness]:
    """The harness on the test database, for a pytest-django test (committed data)."""
    harness = FerryHarness()
    try:
        yield harness
    finally:
        harness.close()
