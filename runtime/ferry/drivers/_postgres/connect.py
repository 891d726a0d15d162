"""Connecting to PostgreSQL host by host, each within its own timeout, and bounding how
long a statement may go unanswered — what lets a fleet follow its primary through a
failover whatever way the old one went.

A URL may name several hosts (``postgresql://h1:5432,h2:5432/db?target_session_attrs=
read-write``): connect to the first that answers and accepts writes. asyncpg tries them in
order but within *one* timeout for all of them, so a first host that does not answer at all
— a machine that lost power refuses nothing, it is silent — spends the whole budget, and
the next host is never tried: the fleet stays down after the standby was promoted. Here
each host gets its own ``connect_timeout`` (libpq's parameter, in seconds per host),
tried in the URL's order, and asyncpg's own check of ``target_session_attrs`` decides
whether a host that answered will do.

A connection already open to such a host hangs the same way: a statement sent on it is
never answered, and the kernel gives up on the connection only after about 15 minutes of
retransmitting. ``command_timeout`` (asyncpg's setting, in seconds) bounds every statement
the driver sends on its pool and its LISTEN session; past it the connection is dropped and
the next use connects afresh, host by host. Migrations are exempt (they may rightly run
long) and run on a connection of their own. The pool's *other* connections to the old
host would each cost a statement timeout in turn; ``Database`` expires them all the moment
a new connection lands on another host of the URL than the last one did.

Both are read off the URL, and taken out of it before asyncpg sees it (it would send an
unknown parameter to the server as a setting).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import asyncpg

from ferry.errors import FerryError

DEFAULT_CONNECT_TIMEOUT_S = 10.0
"""How long one host may take to accept a connection before the next one is tried."""
DEFAULT_COMMAND_TIMEOUT_S = 30.0
"""How long a statement may go unanswered before its connection is given up on: far above
any statement the driver sends in the normal course (milliseconds; a prune batch or a
dashboard chart, seconds), and as long as a worker's default lease, past which an answer
is of no use to it anyway. asyncpg then asks the server to cancel the statement, within
the same bound, and drops the connection."""

_NEXT_HOST = (
    OSError,  # refused, reset, unreachable
    TimeoutError,  # silent past connect_timeout
    asyncpg.CannotConnectNowError,  # starting up, shutting down, in recovery
    asyncpg.TargetServerAttributeNotMatched,  # a standby, when writes are wanted
)
"""Why a host is passed over for the next one (asyncpg's own reasons, and its silence)."""


@dataclass(frozen=True, slots=True)
class ConnectOptions:
    """A Postgres URL as the driver connects with it."""

    dsn: str
    """The URL without ``connect_timeout`` and ``command_timeout``: what asyncpg reads."""
    hosts: tuple[str, ...]
    """``dsn`` once per host it names, in order (one entry for a single host or a socket)."""
    names: tuple[str, ...]
    """Each host as ``host:port`` (no credentials): what logs name."""
    connect_timeout_s: float | None
    """Per host; None waits as long as the network does."""
    command_timeout_s: float | None
    """Per statement; None waits forever."""

    @classmethod
    def of(cls, url: str) -> ConnectOptions:
        """Read ``url``; a timeout that is not a number of seconds is ``X_DB_URL_INVALID``."""
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        kept = urlencode([(key, value) for key, value in query if key not in _OURS])
        credentials, at, hosts = parts.netloc.rpartition("@")
        names = hosts.split(",")
        dsn = urlunsplit(parts._replace(query=kept))
        return cls(
            dsn=dsn,
            hosts=tuple(
                urlunsplit(parts._replace(netloc=f"{credentials}{at}{name}", query=kept))
                for name in names
            )
            if len(names) > 1
            else (dsn,),
            names=tuple(name or "localhost" for name in names),
            connect_timeout_s=_seconds(dict(query), "connect_timeout", DEFAULT_CONNECT_TIMEOUT_S),
            command_timeout_s=_seconds(dict(query), "command_timeout", DEFAULT_COMMAND_TIMEOUT_S),
        )

    async def connect(self, *, bounded: bool = True, **kwargs: Any) -> asyncpg.Connection[Any]:
        """A connection to the first host, in the URL's order, that answers within
        ``connect_timeout`` and matches ``target_session_attrs``; its statements bounded by
        ``command_timeout`` unless not ``bounded``. Raises what the last host raised."""
        connection, _ = await self.connect_first(bounded=bounded, **kwargs)
        return connection

    async def connect_first(
        self, *, bounded: bool = True, **kwargs: Any
    ) -> tuple[asyncpg.Connection[Any], int]:
        """``connect``, also answering which host (its index in ``hosts``) took it."""
        if bounded and self.command_timeout_s is not None:
            kwargs.setdefault("command_timeout", self.command_timeout_s)
        failure: BaseException | None = None
        for index, host in enumerate(self.hosts):
            try:
                connection: asyncpg.Connection[Any] = await asyncpg.connect(
                    host, timeout=self.connect_timeout_s or math.inf, **kwargs
                )
                return connection, index
            except _NEXT_HOST as error:
                failure = error
        assert failure is not None
        raise failure


_OURS = frozenset({"connect_timeout", "command_timeout"})


def _seconds(query: dict[str, str], name: str, default: float) -> float | None:
    """``name`` from the URL in seconds (0 or less: no limit), or ``default``."""
    text = query.get(name)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isnan(value) or math.isinf(value):
        raise FerryError(
            "X_DB_URL_INVALID",
            f"the database URL's {name} is {text!r}, not a number of seconds",
            f"write {name}=10 (seconds; 0 waits without limit), or leave it out for {default:g} s",
        )
    return value if value > 0 else None
