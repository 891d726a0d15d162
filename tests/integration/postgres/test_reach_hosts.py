"""The driver follows a URL's hosts as a failover needs: a host that never answers is
passed over after its own ``connect_timeout`` (for the pool and the LISTEN session alike),
a statement on a connection gone silent is given up after ``command_timeout``, the next
one connecting afresh, and one lost connection is enough to give up on all the pool holds.
The silent host is a proxy that accepts and never relays."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from support.tcp_proxy import TcpProxy, proxied, upstream_of
from support.waiting import eventually

from ferry.drivers import postgres_job_driver
from ferry.drivers.protocol import ClaimOptions, EnqueueRequest

GUARD_S = 30.0
"""How long a call may take before the test fails instead of hanging (a guard, not a
timing: the fix is what keeps each call far below it)."""


@pytest.fixture
def proxies(postgres_dsn: str) -> Iterator[tuple[TcpProxy, TcpProxy]]:
    """Two ways to the test server: one silent from the start, one that relays."""
    silent, live = TcpProxy(upstream_of(postgres_dsn)), TcpProxy(upstream_of(postgres_dsn))
    silent.cut()
    yield silent, live
    for proxy in (silent, live):
        proxy.close()


async def test_a_first_host_that_never_answers_is_passed_over_for_the_next(
    postgres_dsn: str, pg_schema: str, proxies: tuple[TcpProxy, TcpProxy]
) -> None:
    silent, live = proxies
    one_host = proxied(postgres_dsn, live)
    both_hosts = one_host.replace(
        f"@{live.host}:{live.port}", f"@{silent.host}:{silent.port},{live.host}:{live.port}"
    )
    driver = postgres_job_driver(f"{both_hosts}?connect_timeout=1", schema=pg_schema)
    try:
        await asyncio.wait_for(driver.open(), GUARD_S)
        request = EnqueueRequest("reach", "default", {}, "reach:1", max_attempts=1)
        await driver.enqueue(request)
        [claimed] = await driver.claim(ClaimOptions("w", 30_000))
        assert claimed.idempotency_key == "reach:1"
        wake = driver.wake()
        await eventually(lambda: wake.healthy, what="the LISTEN session on the second host")
    finally:
        await driver.close()


async def test_a_statement_on_a_silent_connection_is_given_up_and_the_next_reconnects(
    postgres_dsn: str, pg_schema: str, proxies: tuple[TcpProxy, TcpProxy]
) -> None:
    _, path = proxies
    url = proxied(postgres_dsn, path)
    driver = postgres_job_driver(f"{url}?connect_timeout=1&command_timeout=1", schema=pg_schema)
    try:
        await asyncio.wait_for(driver.open(), GUARD_S)
        await driver.stats()
        path.cut()  # the host goes silent under an open connection
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(driver.stats(), GUARD_S)
        path.heal()

        async def answers() -> bool:
            try:
                await asyncio.wait_for(driver.stats(), GUARD_S)
            except TimeoutError:
                return False
            return True

        await eventually(answers, what="a statement answered on a fresh connection")
    finally:
        await driver.close()


async def test_when_one_connection_is_lost_the_pool_gives_up_on_the_rest(
    postgres_dsn: str,
    pg_schema: str,
    proxies: tuple[TcpProxy, TcpProxy],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The pool fills with connections to the first host; it goes silent. One statement
    pays the timeout, and every other connection to the first host is given up with its
    own: no further statement waits on the old host, each connects to the second one (and
    says the primary moved)."""
    old, new = proxies
    old.heal()
    new.cut()  # the second host is not reached while the first answers
    url = proxied(postgres_dsn, old).replace(
        f"@{old.host}:{old.port}", f"@{old.host}:{old.port},{new.host}:{new.port}"
    )
    driver = postgres_job_driver(
        f"{url}?connect_timeout=1&command_timeout=1", schema=pg_schema, pool_max_size=4
    )
    try:
        await asyncio.wait_for(driver.open(), GUARD_S)
        await asyncio.gather(*(driver.stats() for _ in range(4)))  # four connections, all old
        old.cut()
        new.heal()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(driver.stats(), GUARD_S)  # the one that pays
        for _ in range(8):
            await asyncio.wait_for(driver.stats(), GUARD_S)
    finally:
        await driver.close()
    [moved] = [r for r in caplog.records if r.getMessage() == "jobs.database.moved"]
    assert (moved.__dict__["from"], moved.__dict__["to"]) == (
        f"{old.host}:{old.port}",
        f"{new.host}:{new.port}",
    )
