"""What the Redis driver refuses, each with its code, a message naming the thing and a fix."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis
from support.runs import send

from ferry import FerryError
from ferry.drivers import RedisJobDriver, job_driver_from_url, redis_job_driver
from ferry.drivers.protocol import RunFilter


async def test_an_enqueue_that_asks_to_join_a_transaction_is_refused_and_writes_nothing(
    driver: RedisJobDriver,
) -> None:
    with pytest.raises(FerryError) as refused:
        await driver.enqueue_many([send("a"), send("b", connection=object())])
    assert refused.value.code == "X_DRIVER_NO_TRANSACTIONS"
    assert '"send"' in refused.value.message and "outbox" in refused.value.fix
    assert await driver.introspect.list_runs(RunFilter()) == []


async def test_an_outbox_append_that_asks_to_join_a_transaction_is_refused(
    driver: RedisJobDriver,
) -> None:
    with pytest.raises(FerryError) as refused:
        await driver.outbox.append("receipt", {}, connection=object())
    assert refused.value.code == "X_DRIVER_NO_TRANSACTIONS"
    assert "postgres_job_driver" in refused.value.fix
    assert await driver.outbox.pending() == 0
    await driver.outbox.append("receipt", {}, connection=None)  # at once, no transaction
    assert await driver.outbox.pending() == 1


async def test_an_unreachable_server_is_refused_without_its_password() -> None:
    driver = redis_job_driver("redis://:s3cret@127.0.0.1:1/0")
    with pytest.raises(FerryError) as refused:
        await driver.stats()
    await driver.close()
    assert refused.value.code == "X_DB_UNREACHABLE"
    assert "127.0.0.1:1" in refused.value.message and "s3cret" not in str(refused.value)


@pytest.mark.parametrize("url", ["redis://host:notaport/0", "redis://localhost/notadb"])
async def test_a_malformed_url_is_refused_before_connecting(url: str) -> None:
    with pytest.raises(FerryError) as refused:
        await redis_job_driver(url).stats()
    assert refused.value.code == "X_DB_URL_INVALID"


def test_a_url_of_no_known_scheme_is_refused() -> None:
    with pytest.raises(FerryError) as refused:
        job_driver_from_url("mysql://u:pw@h/db")
    assert refused.value.code == "X_DB_URL_INVALID"
    assert '"mysql://"' in refused.value.message and "pw" not in refused.value.message
    assert "redis://" in refused.value.fix


def test_the_url_picks_the_driver() -> None:
    redis = job_driver_from_url("redis://:pw@H:6379/2", schema="app")
    assert (redis.name, redis.location) == ("redis", "redis://h:6379/2?prefix=app")
    assert job_driver_from_url("postgresql://u@h/db").name == "postgres"


@pytest.mark.parametrize("prefix", ["", "a{b}", "with space", "x" * 65])
def test_a_prefix_that_is_not_a_plain_name_is_refused(prefix: str) -> None:
    with pytest.raises(FerryError) as refused:
        redis_job_driver("redis://h/0", prefix=prefix)
    assert refused.value.code == "X_INVARIANT" and "prefix" in refused.value.message


async def test_a_borrowed_client_must_answer_text(redis_url: str) -> None:
    client = Redis.from_url(redis_url)
    with pytest.raises(FerryError) as refused:
        redis_job_driver(client)
    assert refused.value.code == "X_INVARIANT" and "decode_responses=True" in refused.value.fix
    await client.aclose()


async def test_a_borrowed_client_stays_open_when_the_driver_closes(
    redis_url: str, redis_prefix: str
) -> None:
    client = Redis.from_url(redis_url, decode_responses=True)
    driver = redis_job_driver(client, prefix=redis_prefix)
    await driver.enqueue(send("borrowed"))
    await driver.close()
    assert await client.ping()
    await client.aclose()


async def test_a_closed_driver_is_refused(driver: RedisJobDriver) -> None:
    await driver.close()
    with pytest.raises(FerryError) as refused:
        await driver.enqueue(send("late"))
    assert refused.value.code == "X_DRIVER_CLOSED"
