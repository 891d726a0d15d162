"""The fixtures every suite shares (a pytest plugin: ``tests/conftest.py`` loads it).

``postgres_dsn`` is a real PostgreSQL server for the session — ``DATABASE_URL``, or the
embedded ``pgserver`` one started in a temporary directory — and each test gets a schema
of its own (``pg_schema``; ``new_pg_schema()`` for more), so tests never see each other's
rows. ``redis_url`` is a real Redis for the session — ``REDIS_URL``, or a ``redis-server``
started on a free port (``support.redis_server``) — and each test gets a key prefix of its
own (``redis_prefix``; ``new_redis_prefix()`` for more). ``clock`` is frozen
unless a suite overrides it (the process suites run on the ``SystemClock``); ``driver`` is
the Postgres driver on both, opened (the conformance suite overrides it with every driver
in ``support.drivers.DRIVERS``); ``harness`` cranks a real worker over that driver. Every
async test runs on the event loop ``FERRY_EVENT_LOOP`` names (``asyncio``, the default
here, or ``uvloop``).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import asyncpg
import pytest

from ferry import _event_loop as event_loop
from ferry._clock import Clock, FrozenClock
from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import JobDriver
from ferry.testing import Harness
from support.drivers import built
from support.processes import CLI_APP_DIR, Fleet
from support.redis_server import RedisServer, delete_prefix


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "driver_options(**options): the options the test's drivers are built with"
    )
    config.addinivalue_line(
        "markers",
        "chaos: kills, partitions and failovers under load (tests/chaos; part of the whole "
        "suite, `-m chaos` runs them alone, `-m 'not chaos'` leaves them out)",
    )
    # The suite runs on asyncio's own loop unless FERRY_EVENT_LOOP=uvloop says otherwise;
    # the processes the tests start (ferry worker, …) inherit the choice.
    os.environ.setdefault(event_loop.ENV, "asyncio")


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    """Every async test and fixture runs on the loop ``FERRY_EVENT_LOOP`` chooses."""
    return {event_loop.chosen_loop(): event_loop.loop_factory()}


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A DSN for a running PostgreSQL server (``DATABASE_URL`` or an embedded one)."""
    configured = os.environ.get("DATABASE_URL")
    if configured:
        yield configured
        return
    import pgserver

    data_dir = tempfile.mkdtemp(prefix="ferry-test-pg-")
    server = pgserver.get_server(data_dir, cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


def _namer(handed_out: list[str]) -> Callable[[], str]:
    """Fresh store names (a schema, a key prefix), each recorded in ``handed_out`` for the
    clean-up."""

    def new() -> str:
        handed_out.append(f"ferry_t_{uuid.uuid4().hex[:12]}")
        return handed_out[-1]

    return new


async def _drop_schemas(dsn: str, schemas: list[str]) -> None:
    connection = await asyncpg.connect(dsn)
    try:
        for schema in schemas:
            await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await connection.close()


@pytest.fixture
def new_pg_schema(postgres_dsn: str) -> Iterator[Callable[[], str]]:
    """Fresh, empty schema names on demand (a test with a second store needs two); every
    one handed out is dropped afterwards.

    A plain (not async) fixture, so a driver builder can ask for it from inside an async
    fixture; the drop runs on a loop of its own in a worker thread.
    """
    schemas: list[str] = []
    yield _namer(schemas)
    if schemas:
        with ThreadPoolExecutor(max_workers=1) as thread:
            thread.submit(asyncio.run, _drop_schemas(postgres_dsn, schemas)).result()


@pytest.fixture
def pg_schema(new_pg_schema: Callable[[], str]) -> str:
    """A fresh, empty schema name for this test (the one its ``driver`` is on)."""
    return new_pg_schema()


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A URL of a running Redis (``REDIS_URL``, or one this session starts, AOF on)."""
    configured = os.environ.get("REDIS_URL")
    if configured:
        yield configured
        return
    server = RedisServer()
    server.start()
    try:
        yield server.url
    finally:
        server.remove()


@pytest.fixture
def new_redis_prefix(redis_url: str) -> Iterator[Callable[[], str]]:
    """Fresh key prefixes on demand (a test with a second store needs two); the keys of
    every one handed out are deleted afterwards."""
    prefixes: list[str] = []
    yield _namer(prefixes)
    for prefix in prefixes:
        delete_prefix(redis_url, prefix)


@pytest.fixture
def redis_prefix(new_redis_prefix: Callable[[], str]) -> str:
    """A fresh key prefix for this test (the one a Redis ``driver`` is on)."""
    return new_redis_prefix()


@pytest.fixture
async def unretrieved() -> AsyncIterator[list[str]]:
    """What asyncio's exception handler was handed while the test ran — a task whose error
    nobody read ("Task exception was never retrieved") says so there when it is collected;
    the list is final once the test called ``gc.collect()``."""
    loop = asyncio.get_running_loop()
    seen: list[str] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: seen.append(str(context.get("message"))))
    yield seen
    loop.set_exception_handler(previous)


@pytest.fixture
def clock() -> Clock:
    """The test's clock: frozen, so only ``clock.advance`` moves time."""
    return FrozenClock()


@pytest.fixture
async def driver(request: pytest.FixtureRequest, clock: Clock) -> AsyncIterator[JobDriver]:
    """An opened Postgres driver on this test's schema and clock."""
    async with built("postgres", request, clock) as postgres:
        assert isinstance(postgres, PostgresJobDriver)
        await postgres.open()
        yield postgres


@pytest.fixture
def harness(driver: JobDriver, clock: FrozenClock) -> Iterator[Harness]:
    """A hand-cranked worker on the test's driver and clock, installed as the ambient
    driver; ``drain()`` fast-forwards retry backoff and fires no declared task."""
    cranked = Harness(driver=driver, clock=clock, tasks=[])
    with cranked.installed():
        yield cranked


@pytest.fixture
async def db(postgres_dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain connection, to read rows and poke the server the way an operator would."""
    connection = await asyncpg.connect(postgres_dsn)
    yield connection
    await connection.close()


@pytest.fixture
async def fleet(postgres_dsn: str, pg_schema: str, tmp_path: Path) -> AsyncIterator[Fleet]:
    """``ferry`` processes on this test's schema; their logs print when the test fails."""
    processes = Fleet(postgres_dsn, pg_schema, tmp_path)
    yield processes
    await processes.close()
    print(processes.logs())


@pytest.fixture(scope="session")
def cli_app() -> Iterator[ModuleType]:
    """The CLI, dashboard and MCP tests' app, imported as ``cli_app``: the name the
    processes they start load it by, so test and process share one module."""
    sys.path.insert(0, str(CLI_APP_DIR))
    try:
        yield importlib.import_module("cli_app")
    finally:
        sys.path.remove(str(CLI_APP_DIR))


@pytest.fixture
async def seeded(
    request: pytest.FixtureRequest, cli_app: ModuleType
) -> AsyncIterator[PostgresJobDriver]:
    """``cli_app``'s schema with one completed, one dead and one queued run, seeded on a
    frozen clock of its own."""
    clock = FrozenClock()
    async with built("postgres", request, clock) as postgres:
        assert isinstance(postgres, PostgresJobDriver)
        await cli_app.seed(postgres, clock)
        yield postgres
