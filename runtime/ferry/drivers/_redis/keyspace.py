"""The key prefix: every key and channel of one driver, and why all share a hash tag."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ferry.errors import FerryError

DEFAULT_PORT = 6379
_PREFIX = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def checked_prefix(prefix: str) -> str:
    """``prefix`` if it is a plain name ferry can put in braces (a hash tag)."""
    if not isinstance(prefix, str) or not _PREFIX.match(prefix):
        raise FerryError(
            "X_INVARIANT",
            f"redis key prefix {prefix!r} is not a plain name of 1 to 64 letters, digits, "
            '".", "_" or "-"',
            'use a prefix such as prefix="ferry" or prefix="ferry-staging"',
        )
    return prefix


class Keyspace:
    """Names under ``{prefix}``: the braces are a hash tag, so on Redis Cluster every key of
    a prefix maps to one hash slot — which a script touching many keys at once requires.
    The Lua side builds the same names (``lua/lib.lua``)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = checked_prefix(prefix)
        self.tag = "{" + self.prefix + "}"

    def __call__(self, *parts: str) -> str:
        """``{prefix}:part:part…``; only the last part may be caller-supplied text."""
        return ":".join((self.tag, *parts))

    @property
    def runs_channel(self) -> str:
        """The pub/sub channel a due run is announced on (its queue is the message)."""
        return self("wake")

    @property
    def outbox_channel(self) -> str:
        """The pub/sub channel an appended outbox entry is announced on."""
        return self("outbox", "wake")

    @property
    def ended_channel(self) -> str:
        """The pub/sub channel the runs a script ended are announced on (their ids,
        comma-separated): what result waiters listen to."""
        return self("ended")


def run_id(job_id: str) -> str | None:
    """``job_id`` if it can name a run (runs are numbered 1, 2, …), else None: no run has
    it, and it never reaches a key name or a script's arithmetic."""
    if job_id.isascii() and job_id.isdigit() and not job_id.startswith("0"):
        return job_id
    return None


def store_location(url: str, prefix: str) -> str:
    """``redis://host:port/db?prefix=name`` from ``url``: no password, the port and database
    spelled out, ``rediss://`` named like ``redis://`` — so two URLs for one store answer
    alike (``JobDriver.location``). A socket is ``unix:///path?db=n&prefix=name``."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    if parts.scheme == "unix":
        return f"unix://{parts.path}?db={query.get('db', '0')}&prefix={prefix}"
    host = (parts.hostname or "localhost").lower()
    database = parts.path.strip("/") or query.get("db", "0")
    return f"redis://{host}:{parts.port or DEFAULT_PORT}/{database}?prefix={prefix}"


def client_location(kwargs: Mapping[str, Any], prefix: str) -> str:
    """The same for a borrowed client, from the connection settings it was built with."""
    if "path" in kwargs:
        return f"unix://{kwargs['path']}?db={kwargs.get('db', 0)}&prefix={prefix}"
    host = str(kwargs.get("host", "localhost")).lower()
    return (
        f"redis://{host}:{kwargs.get('port', DEFAULT_PORT)}/{kwargs.get('db', 0)}?prefix={prefix}"
    )
