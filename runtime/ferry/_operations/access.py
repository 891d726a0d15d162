"""Who may see and act on the dashboard: tokens, sessions and CSRF tokens.

Two permissions, as the spec names them: ``job:read`` (every page) and ``job:manage``
(retry, cancel, pause, resume, run now; it implies read). A request proves one with a
bearer token (``Authorization: Bearer …``) or with the session cookie the login form sets
after the token was typed once. The cookie is signed, ``HttpOnly`` and ``SameSite=Strict``
(and ``Secure`` when the request came over HTTPS), and every form a session posts carries
a CSRF token derived from that session, so a page on another site can neither read nor
forge a state-changing request. Nothing is served without a token unless the dashboard is
started with ``insecure_dev=True``.

Signing out revokes the session server-side (``ferry._admin.sessions``, a record of the
driver's): the signature alone would keep a copied cookie valid until it expires.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ferry._clock import Clock, SystemClock
from ferry.errors import FerryError

Level = Literal["read", "manage"]
PERMISSIONS: dict[Level, frozenset[str]] = {
    "read": frozenset({"job:read"}),
    "manage": frozenset({"job:read", "job:manage"}),
}
SESSION_COOKIE = "ferry_admin_session"
SESSION_MAX_AGE_S = 12 * 3600


@dataclass(frozen=True, slots=True)
class Grant:
    """What one request may do, and the session it rides on (None for a bearer token)."""

    level: Level
    session: str | None
    issued_at_s: int = 0
    fresh: bool = False
    """A session minted for this request (insecure dev mode): its cookie must be set."""

    @property
    def permissions(self) -> frozenset[str]:
        """The permissions this grant holds."""
        return PERMISSIONS[self.level]

    @property
    def expires_at_ms(self) -> int:
        """When the session's cookie stops being accepted anyway."""
        return (self.issued_at_s + SESSION_MAX_AGE_S) * 1000


class Access:
    """The dashboard's tokens and the secret its session cookies are signed with."""

    def __init__(
        self,
        *,
        read_tokens: Iterable[str] = (),
        manage_tokens: Iterable[str] = (),
        insecure_dev: bool = False,
        secret: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._clock: Clock = clock or SystemClock()
        self._tokens: list[tuple[str, Level]] = [
            *((t, "manage") for t in manage_tokens if t),
            *((t, "read") for t in read_tokens if t),
        ]
        if not self._tokens and not insecure_dev:
            raise FerryError(
                "X_INVARIANT",
                "the admin dashboard was given no access token, and it serves nothing without one",
                "pass --token-manage (and --token-read) or set FERRY_ADMIN_TOKEN_MANAGE / "
                "FERRY_ADMIN_TOKEN_READ; only on your own machine, --insecure-dev",
            )
        self.insecure_dev = insecure_dev
        # A random secret per process logs everyone out on restart; FERRY_ADMIN_SECRET
        # keeps sessions valid across restarts and replicas.
        self._secret = (secret or secrets.token_hex(32)).encode()

    @classmethod
    def from_options(
        cls,
        read_token: str | None,
        manage_token: str | None,
        *,
        insecure_dev: bool,
    ) -> Access:
        """Tokens from the command line, else from ``FERRY_ADMIN_TOKEN_READ/_MANAGE``."""
        env = os.environ.get
        return cls(
            read_tokens=[read_token or env("FERRY_ADMIN_TOKEN_READ") or ""],
            manage_tokens=[manage_token or env("FERRY_ADMIN_TOKEN_MANAGE") or ""],
            insecure_dev=insecure_dev,
            secret=env("FERRY_ADMIN_SECRET"),
        )

    def bearer_level(self, authorization: str | None) -> Level | None:
        """The level an ``Authorization: Bearer <token>`` header grants (None: no bearer
        token, or one that grants nothing)."""
        if authorization is None or not authorization.lower().startswith("bearer "):
            return None
        return self.level_of(authorization[7:].strip())

    def level_of(self, token: str) -> Level | None:
        """The permission level a token grants, compared in constant time."""
        found: Level | None = None
        for known, level in self._tokens:
            if hmac.compare_digest(known.encode(), token.encode()) and found is None:
                found = level
        return found

    def resolve(self, authorization: str | None, cookie: str | None) -> Grant | None:
        """The grant a request carries; in insecure dev mode a fresh manage session.

        A session's revocation is not checked here (it needs storage): the dashboard asks
        the driver afterwards."""
        if authorization is not None and authorization.lower().startswith("bearer "):
            level = self.bearer_level(authorization)
            return Grant(level, None) if level is not None else None
        if cookie:
            grant = self._verify(cookie)
            if grant is not None:
                return grant
        if self.insecure_dev:
            return self.new_session("manage", fresh=True)
        return None

    def new_session(self, level: Level, *, fresh: bool = False) -> Grant:
        """A new signed session at ``level``."""
        return Grant(level, secrets.token_urlsafe(18), self._now_s(), fresh)

    def cookie_value(self, grant: Grant) -> str:
        """The signed cookie carrying ``grant``'s session."""
        assert grant.session is not None
        body = f"{grant.session}.{grant.level}.{grant.issued_at_s}"
        return f"{body}.{self._sign(body)}"

    def csrf_token(self, grant: Grant) -> str:
        """The token every form of this session posts (empty for a bearer grant)."""
        return self._sign(f"csrf.{grant.session}") if grant.session is not None else ""

    def csrf_ok(self, grant: Grant, submitted: str | None) -> bool:
        """A bearer grant cannot be forged cross-site; a session must post its token."""
        if grant.session is None:
            return True
        return submitted is not None and hmac.compare_digest(self.csrf_token(grant), submitted)

    def session_of(self, cookie: str | None) -> Grant | None:
        """The grant of a validly signed, unexpired session cookie (sign-out reads it)."""
        return self._verify(cookie) if cookie else None

    def _verify(self, cookie: str) -> Grant | None:
        parts = cookie.split(".")
        if len(parts) != 4 or parts[1] not in PERMISSIONS or not parts[2].isdigit():
            return None
        session, level, issued, signature = parts
        if not hmac.compare_digest(self._sign(f"{session}.{level}.{issued}"), signature):
            return None
        if self._now_s() - int(issued) > SESSION_MAX_AGE_S:
            return None
        return Grant(level, session, int(issued))  # type: ignore[arg-type]

    def _now_s(self) -> int:
        return self._clock.now_ms() // 1000

    def _sign(self, text: str) -> str:
        return hmac.new(self._secret, text.encode(), hashlib.sha256).hexdigest()


def trusted_proxies(text: str | None) -> tuple[str, ...]:
    """The proxies ``--trust-proxy`` (``FERRY_ADMIN_TRUST_PROXY``) names: a comma-separated
    list of addresses or networks (``10.0.0.7``, ``10.0.0.0/8``, ``::1``). Only a request
    whose TCP peer is one of them has its ``X-Forwarded-For``/``-Proto`` believed (by the
    server, before the app sees the request); none named, none believed."""
    proxies: list[str] = []
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        try:
            proxies.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise FerryError(
                "X_INVARIANT",
                f"--trust-proxy item {item[:60]!r} is not an address or a network",
                "name the proxy in front of this server by its address, e.g. "
                "--trust-proxy 10.0.0.7 or --trust-proxy 10.0.0.0/8 (comma-separated); leave "
                "it out when clients connect directly",
            ) from None
    return tuple(proxies)
