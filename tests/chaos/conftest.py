"""The chaos tests (marker ``chaos``) reuse the worker tests' app and clock, on every
durable driver.

The queue lives on the driver under test (one per kind in ``support.drivers.DURABLE``);
the effects the jobs write stay in PostgreSQL tables (``worker.app``) in the test's
``pg_schema``, read the same way whichever driver ran them.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

# The worker tests' package is named ``worker`` (pytest's rootdir-relative naming, with
# tests/integration on the path); put that folder on the path when chaos runs alone.
_INTEGRATION = str(Path(__file__).resolve().parents[1] / "integration")
if _INTEGRATION not in sys.path:
    sys.path.insert(0, _INTEGRATION)

from support.drivers import DRIVERS, DURABLE, built  # noqa: E402
from support.processes import Fleet  # noqa: E402
from worker.conftest import app_installed, clock  # noqa: E402

from ferry._clock import Clock  # noqa: E402
from ferry.drivers.protocol import JobDriver  # noqa: E402

__all__ = ["clock", "driver", "fleet"]

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of this folder carries the ``chaos`` marker."""
    for item in items:
        if _HERE in item.path.parents:
            item.add_marker(pytest.mark.chaos)


@pytest.fixture(params=DURABLE)
async def driver(
    request: pytest.FixtureRequest, clock: Clock, postgres_dsn: str, pg_schema: str
) -> AsyncIterator[JobDriver]:
    """The queue's driver of each durable kind, installed as the job driver; the app's
    effect tables in ``pg_schema``."""
    async with (
        built(request.param, request, clock) as queue,
        app_installed(queue, postgres_dsn, pg_schema),
    ):
        yield queue


@pytest.fixture
async def fleet(
    driver: JobDriver,
    request: pytest.FixtureRequest,
    postgres_dsn: str,
    pg_schema: str,
    tmp_path: Path,
) -> AsyncIterator[Fleet]:
    """Worker processes on the test driver's store, writing effects to ``pg_schema``;
    their logs print when the test fails."""
    queue = DRIVERS[driver.name].process_env(driver, request)
    effects = {"EFFECTS_DATABASE_URL": postgres_dsn, "EFFECTS_SCHEMA": pg_schema}
    processes = Fleet(postgres_dsn, pg_schema, tmp_path, overrides={**queue, **effects})
    yield processes
    await processes.close()
    print(processes.logs())
