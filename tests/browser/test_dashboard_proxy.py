"""Forwarded headers are believed only from a proxy named with ``--trust-proxy``, and wrong
tokens are throttled per real peer, bearer tokens too (the dashboard and the MCP tools over
HTTP, each served by the real uvicorn server ferry runs, on loopback)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence

import httpx
import pytest
from support.processes import free_port
from support.waiting import eventually

from ferry._admin import Access, admin_app
from ferry._clock import FrozenClock
from ferry._mcp import Backend, admin_tools
from ferry._mcp.serve import MCP_PATH, mcp_role
from ferry._operations.access import trusted_proxies
from ferry._serving import AsgiRole
from ferry.drivers import PostgresJobDriver
from ferry.errors import FerryError

from .conftest import MANAGE_TOKEN, READ_TOKEN

FORGED = {"X-Forwarded-Proto": "https"}


def _access() -> Access:
    return Access(read_tokens=[READ_TOKEN], manage_tokens=[MANAGE_TOKEN])


@contextlib.asynccontextmanager
async def _serving(role: AsgiRole, port: int, path: str) -> AsyncIterator[str]:
    """``role`` serving on loopback until the block ends; yields its base URL."""
    task = asyncio.ensure_future(role.run())
    base = f"http://127.0.0.1:{port}"

    async def answering() -> bool:
        with contextlib.suppress(httpx.HTTPError):
            async with httpx.AsyncClient() as http:
                await http.get(f"{base}{path}")
                return True
        return False

    try:
        await eventually(answering, within_s=30, what="the server answering")
        yield base
    finally:
        role.drain()
        await asyncio.wait_for(task, 30)


def _dashboard(driver: PostgresJobDriver, proxies: Sequence[str]) -> tuple[AsgiRole, int]:
    port = free_port()
    app = admin_app(driver, access=_access())
    return AsgiRole(app, host="127.0.0.1", port=port, trusted_proxies=proxies), port


async def test_forwarded_headers_from_an_unnamed_peer_change_nothing(
    seeded: PostgresJobDriver,
) -> None:
    """A loopback peer is no proxy unless named: its X-Forwarded-Proto does not make the
    cookie Secure, and a new X-Forwarded-For per guess does not escape the throttle."""
    role, port = _dashboard(seeded, ())
    async with _serving(role, port, "/admin/login") as base, httpx.AsyncClient() as http:
        signed_in = await http.post(
            f"{base}/admin/login", data={"token": READ_TOKEN}, headers=FORGED
        )
        assert signed_in.status_code == 303
        assert "secure" not in signed_in.headers["set-cookie"].lower()
        answers = [
            (
                await http.post(
                    f"{base}/admin/login",
                    data={"token": f"guess-{n}"},
                    headers={"X-Forwarded-For": f"198.51.100.{n}"},
                )
            ).status_code
            for n in range(6)
        ]
        assert answers == [401] * 5 + [429], "the guesses count against the real peer"


async def test_a_named_proxy_is_believed_for_the_client_and_the_scheme(
    seeded: PostgresJobDriver,
) -> None:
    role, port = _dashboard(seeded, trusted_proxies("127.0.0.1"))
    async with _serving(role, port, "/admin/login") as base, httpx.AsyncClient() as http:
        signed_in = await http.post(
            f"{base}/admin/login", data={"token": READ_TOKEN}, headers=FORGED
        )
        assert "; secure" in signed_in.headers["set-cookie"].lower()
        guesser = {"X-Forwarded-For": "203.0.113.7"}
        answers = [
            (
                await http.post(f"{base}/admin/login", data={"token": "guess"}, headers=guesser)
            ).status_code
            for _ in range(6)
        ]
        assert answers == [401] * 5 + [429]
        other = {"X-Forwarded-For": "203.0.113.8"}
        fine = await http.post(f"{base}/admin/login", data={"token": READ_TOKEN}, headers=other)
        assert fine.status_code == 303, "the proxy's other clients are not held back"


async def test_wrong_bearer_tokens_on_the_dashboard_are_logged_and_throttled(
    seeded: PostgresJobDriver, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="ferry.admin")
    clock = seeded.clock
    assert isinstance(clock, FrozenClock)
    role, port = _dashboard(seeded, ())
    async with _serving(role, port, "/admin/login") as base, httpx.AsyncClient() as http:
        wrong = {"Authorization": "Bearer guess"}
        answers = [
            (await http.get(f"{base}/admin/jobs", headers=wrong)).status_code for _ in range(6)
        ]
        assert answers == [303] * 5 + [429], "a GET without a grant goes to the sign-in"
        right = {"Authorization": f"Bearer {READ_TOKEN}"}
        held = await http.get(f"{base}/admin/jobs", headers=right)
        assert held.status_code == 429 and int(held.headers["retry-after"]) > 0
        assert "X_THROTTLED" in held.text
        clock.advance("5m")
        assert (await http.get(f"{base}/admin/jobs", headers=right)).status_code == 200
    failed = [r for r in caplog.records if r.getMessage() == "admin.bearer.failed"]
    assert len(failed) == 5 and failed[0].client == "127.0.0.1"  # type: ignore[attr-defined]
    assert any(r.getMessage() == "admin.bearer.throttled" for r in caplog.records)


async def test_wrong_bearer_tokens_on_the_mcp_tools_are_logged_and_throttled(
    seeded: PostgresJobDriver, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="ferry.admin")
    access = _access()
    port = free_port()
    server = admin_tools(Backend(seeded, access))
    role = mcp_role(
        server, access, transport="http", host="127.0.0.1", port=port, clock=seeded.clock
    )
    assert isinstance(role, AsgiRole)
    async with _serving(role, port, MCP_PATH) as base, httpx.AsyncClient() as http:
        wrong = {"Authorization": "Bearer guess", "X-Forwarded-For": "198.51.100.1"}
        answers = [
            (await http.post(f"{base}{MCP_PATH}", headers=wrong)).status_code for _ in range(6)
        ]
        # The probe that waited for the server counted one failure (it sent no token).
        assert answers == [401] * 4 + [429] * 2
        held = await http.post(
            f"{base}{MCP_PATH}", headers={"Authorization": f"Bearer {READ_TOKEN}"}
        )
        assert held.status_code == 429 and held.json()["code"] == "X_THROTTLED"
    failed = [r for r in caplog.records if r.getMessage() == "mcp.bearer.failed"]
    assert len(failed) == 5 and {r.client for r in failed} == {"127.0.0.1"}  # type: ignore[attr-defined]


def test_trust_proxy_takes_addresses_and_networks_only() -> None:
    assert trusted_proxies("10.0.0.7, 10.1.0.0/16,::1") == ("10.0.0.7/32", "10.1.0.0/16", "::1/128")
    assert trusted_proxies("") == ()
    for word in ("1", "true", "*", "proxy.internal"):
        with pytest.raises(FerryError) as refused:
            trusted_proxies(word)
        assert refused.value.code == "X_INVARIANT" and "--trust-proxy" in refused.value.message
