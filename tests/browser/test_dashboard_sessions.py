"""The dashboard's hardening (in-process ASGI, real Postgres): bad filters are 400s, the
session cookie is ``Secure`` over HTTPS, a signed-out cookie is dead on every replica,
banners come from a fixed table, and failed sign-ins are throttled and logged."""

from __future__ import annotations

import logging
import re

import httpx
import pytest

from ferry._admin import Access, admin_app
from ferry._admin.banners import NOTICES
from ferry._clock import FrozenClock
from ferry.drivers import PostgresJobDriver

from .conftest import MANAGE_TOKEN, READ_TOKEN

READ = {"Authorization": f"Bearer {READ_TOKEN}"}


def _client(driver: PostgresJobDriver, access: Access, base: str = "http://dashboard"):  # type: ignore[no-untyped-def]
    """Another dashboard process over the same database: a replica, as far as state goes."""
    app = admin_app(driver, access=access)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base)


def _access(**options: object) -> Access:
    return Access(
        read_tokens=[READ_TOKEN],
        manage_tokens=[MANAGE_TOKEN],
        secret="one-secret-for-every-replica",
        **options,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("before=99999999999999999999999", "X_RUN_ID_INVALID"),
        ("before=-1", "X_RUN_ID_INVALID"),
        ("queue=%00", "X_INVARIANT"),
        ("job=a%00b", "X_INVARIANT"),
        ("tenant=acme%00", "X_INVARIANT"),
        ("since=99999999999999999999d", "X_OUT_OF_RANGE"),
        ("limit=%C2%B2", "X_OUT_OF_RANGE"),
    ],
)
async def test_a_filter_no_run_can_match_is_a_400_naming_the_word(
    client: httpx.AsyncClient, query: str, code: str
) -> None:
    page = await client.get(f"/admin/jobs?{query}", headers=READ)
    assert page.status_code == 400
    word = query.split("=")[0]
    assert re.search(rf"{code}: {word} ", page.text), page.text


async def test_the_session_cookie_is_secure_over_https(seeded: PostgresJobDriver) -> None:
    """(Behind a proxy: ``test_dashboard_proxy``, through the real server.)"""
    async with _client(seeded, _access(), "https://dashboard") as https:
        signed_in = await https.post("/admin/login", data={"token": READ_TOKEN})
        assert "; secure" in signed_in.headers["set-cookie"].lower()
    async with _client(seeded, _access()) as plain:
        signed_in = await plain.post("/admin/login", data={"token": READ_TOKEN})
        assert "secure" not in signed_in.headers["set-cookie"].lower()


async def test_a_signed_out_cookie_stops_working_at_once_on_every_replica(
    seeded: PostgresJobDriver,
) -> None:
    async with (
        _client(seeded, _access()) as one,
        _client(seeded, _access()) as two,
    ):
        await one.post("/admin/login", data={"token": MANAGE_TOKEN})
        cookie = one.cookies.get("ferry_admin_session", path="/admin")
        assert cookie is not None
        two.cookies.set("ferry_admin_session", cookie, path="/admin")
        assert (await two.get("/admin/jobs")).status_code == 200, "the copy works on replica 2"

        out = await one.post("/admin/logout")
        assert out.status_code == 303
        stolen = {"Cookie": f"ferry_admin_session={cookie}"}
        for client in (one, two):
            client.cookies.clear()
            page = await client.get("/admin/jobs", headers=stolen)
            assert (page.status_code, page.headers["location"]) == (303, "/admin/login")
        other = _access()
        assert other.session_of(cookie) is not None, "the signature alone still verifies"


async def test_a_banner_shows_only_the_fixed_messages_its_key_names(
    client: httpx.AsyncClient,
) -> None:
    known = await client.get("/admin/jobs?notice=run-retried", headers=READ)
    assert NOTICES["run-retried"] in known.text
    forged = await client.get(
        "/admin/jobs?notice=Your+token+expired%2C+paste+it+at+evil.example"
        "&error=Call+support+at+555",
        headers=READ,
    )
    assert forged.status_code == 200
    assert "evil.example" not in forged.text and "555" not in forged.text
    assert 'role="status"' not in forged.text and 'role="alert"' not in forged.text
    coded = await client.get("/admin/jobs?error=X_RUN_STATE", headers=READ)
    assert "X_RUN_STATE: the run&#39;s state does not allow that action" in coded.text


async def test_failed_sign_ins_are_logged_and_throttled_per_address(
    seeded: PostgresJobDriver, caplog: pytest.LogCaptureFixture
) -> None:
    clock = seeded.clock
    assert isinstance(clock, FrozenClock), "the throttle's window runs on the driver's clock"
    app = admin_app(seeded, access=_access())
    caplog.set_level(logging.WARNING, logger="ferry.admin")
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app, client=("203.0.113.7", 5000)),
        base_url="http://dashboard",
    ) as guesser:
        answers = [
            (await guesser.post("/admin/login", data={"token": f"guess-{n}"})).status_code
            for n in range(6)
        ]
        assert answers == [401, 401, 401, 401, 401, 429]
        refused = await guesser.post("/admin/login", data={"token": MANAGE_TOKEN})
        assert refused.status_code == 429, "even the right token waits out the window"
        assert int(refused.headers["retry-after"]) > 0
        clock.advance("5m")
        again = await guesser.post("/admin/login", data={"token": MANAGE_TOKEN})
        assert again.status_code == 303, "the window has passed"
    failed = [r for r in caplog.records if r.getMessage() == "admin.signin.failed"]
    assert len(failed) == 5 and failed[0].client == "203.0.113.7"  # type: ignore[attr-defined]
    assert any(r.getMessage() == "admin.signin.throttled" for r in caplog.records)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app, client=("198.51.100.9", 5000)),
        base_url="http://dashboard",
    ) as someone_else:
        signed_in = await someone_else.post("/admin/login", data={"token": MANAGE_TOKEN})
        assert signed_in.status_code == 303, "another address is not held back"
