"""Enqueue on Postgres: idempotency under races, transactions, batches, one round trip."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import asyncpg
import pytest
from support.runs import send
from support.waiting import eventually

from ferry._clock import FrozenClock
from ferry.drivers import PostgresJobDriver
from ferry.drivers._postgres.queries import channel_for
from ferry.errors import FerryError

Connect = Callable[[], AbstractAsyncContextManager[asyncpg.Connection]]


async def _rows(db: asyncpg.Connection, schema: str, key: str) -> int:
    count: int = await db.fetchval(
        f'SELECT count(*) FROM "{schema}".jobs WHERE idempotency_key = $1', key
    )
    return count


async def test_concurrent_enqueues_of_one_key_write_one_row(
    driver: PostgresJobDriver, postgres_dsn: str, pg_schema: str, db: asyncpg.Connection
) -> None:
    connections = [await asyncpg.connect(postgres_dsn) for _ in range(20)]
    try:
        results = await asyncio.gather(
            *(driver.enqueue(send("race", connection=c)) for c in connections)
        )
    finally:
        await asyncio.gather(*(c.close() for c in connections))
    assert len({r.job_id for r in results}) == 1
    assert sorted(r.deduplicated for r in results) == [False] + [True] * 19
    assert await _rows(db, pg_schema, "race") == 1


async def test_a_key_committed_during_the_statement_resolves_to_that_run(
    driver: PostgresJobDriver, postgres_dsn: str, pg_schema: str, db: asyncpg.Connection
) -> None:
    """The loser of the race cannot see the winner's row in its own snapshot; it must
    still answer the winner's id rather than nothing or an error."""
    first = await asyncpg.connect(postgres_dsn)
    second = await asyncpg.connect(postgres_dsn)
    try:
        transaction = first.transaction()
        await transaction.start()
        winner = await driver.enqueue(send("late", connection=first))
        loser = asyncio.create_task(driver.enqueue(send("late", connection=second)))

        async def loser_waits_on_the_key() -> bool:
            state = await db.fetchval(
                "SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1",
                second.get_server_pid(),
            )
            return bool(state == "Lock")

        await eventually(
            loser_waits_on_the_key, what="the second enqueue waiting on the key's lock"
        )
        await transaction.commit()
        result = await asyncio.wait_for(loser, 10)
    finally:
        await first.close()
        await second.close()
    assert result.job_id == winner.job_id
    assert result.deduplicated is True
    assert await _rows(db, pg_schema, "late") == 1


@asynccontextmanager
async def _plain_connection(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(dsn)
    try:
        yield connection
    finally:
        await connection.close()


@asynccontextmanager
async def _app_pool_connection(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    async with (
        asyncpg.create_pool(dsn, min_size=1, max_size=2) as pool,
        pool.acquire() as connection,
    ):
        yield connection  # type: ignore[misc]


@pytest.fixture(params=["plain-connection", "app-pool-connection"])
def app_connection(request: pytest.FixtureRequest, postgres_dsn: str) -> Connect:
    """How the application holds its transaction: a bare connection or one from its pool."""
    make = _plain_connection if request.param == "plain-connection" else _app_pool_connection
    return lambda: make(postgres_dsn)


@pytest.fixture
async def notifications(postgres_dsn: str, pg_schema: str) -> AsyncIterator[asyncio.Queue[str]]:
    """Every NOTIFY payload (a queue name) on the schema's channel, in commit order."""
    received: asyncio.Queue[str] = asyncio.Queue()
    listener = await asyncpg.connect(postgres_dsn)
    await listener.add_listener(
        channel_for(pg_schema), lambda _c, _p, _ch, payload: received.put_nowait(payload)
    )
    yield received
    await listener.close()


async def test_rolled_back_enqueue_leaves_no_row_and_no_notify(
    driver: PostgresJobDriver,
    app_connection: Connect,
    notifications: asyncio.Queue[str],
    db: asyncpg.Connection,
    pg_schema: str,
) -> None:
    async with app_connection() as connection:
        with pytest.raises(RuntimeError, match="business write failed"):
            async with connection.transaction():
                await driver.enqueue(send("rolled-back", connection=connection, queue="lost"))
                raise RuntimeError("business write failed")
    # Notifications arrive in commit order: once a later commit's NOTIFY is here, an
    # earlier one from the rolled-back transaction would have arrived first.
    await driver.enqueue(send("sentinel", queue="sentinel"))
    assert await asyncio.wait_for(notifications.get(), 10) == "sentinel"
    assert await _rows(db, pg_schema, "rolled-back") == 0


async def test_committed_enqueue_is_a_row_and_a_notify(
    driver: PostgresJobDriver,
    app_connection: Connect,
    notifications: asyncio.Queue[str],
    db: asyncpg.Connection,
    pg_schema: str,
) -> None:
    async with app_connection() as connection:
        async with connection.transaction():
            result = await driver.enqueue(send("committed", connection=connection))
            assert notifications.empty()
        assert await asyncio.wait_for(notifications.get(), 10) == "default"
    run = await driver.introspect.get_run(result.job_id)
    assert run is not None and run.summary.state == "queued"
    assert await _rows(db, pg_schema, "committed") == 1


async def test_a_delayed_run_announces_when_it_falls_due_instead_of_waking_workers_now(
    driver: PostgresJobDriver, notifications: asyncio.Queue[str], clock: FrozenClock
) -> None:
    due_at = clock.now_ms() + 60_000
    await driver.enqueue(send("later", queue="later", run_at_ms=due_at))
    await driver.enqueue(send("now", queue="now"))
    assert await asyncio.wait_for(notifications.get(), 10) == f"later@{due_at}"
    assert await asyncio.wait_for(notifications.get(), 10) == "now"


async def test_enqueue_many_dedupes_in_the_batch_and_against_existing_runs(
    driver: PostgresJobDriver, db: asyncpg.Connection, pg_schema: str
) -> None:
    existing = await driver.enqueue(send("old"))
    results = await driver.enqueue_many(
        [send("a"), send("old"), send("b"), send("a"), send("c", priority=3)]
    )
    ids = [r.job_id for r in results]
    assert [r.deduplicated for r in results] == [False, True, False, True, False]
    assert ids[1] == existing.job_id
    assert ids[0] == ids[3]
    assert len({ids[0], ids[1], ids[2], ids[4]}) == 4
    total = await db.fetchval(f'SELECT count(*) FROM "{pg_schema}".jobs')
    assert total == 4


async def test_enqueue_joins_the_callers_connection_with_one_statement(
    driver: PostgresJobDriver, postgres_dsn: str
) -> None:
    connection = await asyncpg.connect(postgres_dsn)
    statements: list[str] = []
    try:
        # The first use of a connection teaches asyncpg the array types (once per connection).
        await driver.enqueue_many([send("warm-up", connection=connection)])
        connection.add_query_logger(lambda logged: statements.append(logged.query))
        await driver.enqueue(send("one", connection=connection))
        await driver.enqueue_many([send(f"batch-{i}", connection=connection) for i in range(500)])
    finally:
        await connection.close()
    assert len(statements) == 2
    assert all("jobs" in statement for statement in statements)


async def test_enqueue_many_refuses_a_batch_split_across_transactions(
    driver: PostgresJobDriver, postgres_dsn: str
) -> None:
    connection = await asyncpg.connect(postgres_dsn)
    try:
        with pytest.raises(FerryError) as refused:
            await driver.enqueue_many([send("x", connection=connection), send("y")])
    finally:
        await connection.close()
    assert refused.value.code == "X_INVARIANT"


async def test_joining_something_that_is_not_a_connection_is_refused(
    driver: PostgresJobDriver,
) -> None:
    with pytest.raises(FerryError) as refused:
        await driver.enqueue(send("x", connection=object()))
    assert refused.value.code == "X_DRIVER_NO_TRANSACTIONS"
