"""Which SQLite file a driver uses, and how: read from a path or a ``sqlite://`` URL.

URLs follow the convention Python tools share (SQLAlchemy's): ``sqlite:///jobs.db`` is
``jobs.db`` relative to the working directory, ``sqlite:////srv/jobs.db`` the absolute
``/srv/jobs.db``. Two query parameters tune the connections: ``synchronous`` (``full``,
the default, or ``normal``) and ``busy_timeout_ms``. Anything else is refused before a
file is touched, so a typo never becomes a silently ignored setting or a stray file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, unquote, urlsplit

from ferry._checks import require_count
from ferry.errors import FerryError

Synchronous = Literal["full", "normal"]
SYNCHRONOUS: tuple[Synchronous, ...] = ("full", "normal")

DEFAULT_BUSY_TIMEOUT_MS = 5_000
"""How long a statement waits for another connection's write lock before it gives up."""

_URL_FIX = (
    "write it as sqlite:///relative/path.db or sqlite:////absolute/path.db, optionally with "
    "?synchronous=normal or ?busy_timeout_ms=10000"
)


@dataclass(frozen=True, slots=True)
class SqliteTarget:
    """One database file and the settings of the driver's connections to it."""

    path: Path
    """Absolute, so every process and the error messages name the same file."""
    synchronous: Synchronous
    busy_timeout_ms: int
    memory: bool = False
    """No file: an in-memory database of this process (``memory_target``)."""


def memory_target() -> SqliteTarget:
    """An in-memory database, the memory driver's store: gone when the driver closes."""
    return SqliteTarget(Path(":memory:"), "normal", DEFAULT_BUSY_TIMEOUT_MS, memory=True)


def sqlite_target(
    path_or_url: str | os.PathLike[str],
    *,
    synchronous: Synchronous | None,
    busy_timeout_ms: int | None,
) -> SqliteTarget:
    """The file ``path_or_url`` names; keyword settings win over the URL's parameters."""
    if isinstance(path_or_url, os.PathLike) or not path_or_url.startswith("sqlite:"):
        raw = os.fspath(path_or_url)
        settings: dict[str, str] = {}
    else:
        raw, settings = _from_url(path_or_url)
    if raw in ("", ":memory:") or raw.startswith("file:"):
        raise FerryError(
            "X_DB_URL_INVALID",
            f"the sqlite driver needs a database file, and {str(path_or_url)!r} names none",
            "pass a file path (sqlite:///jobs.db); for a queue that lives in this process "
            "only, use memory_job_driver()",
        )
    chosen = synchronous or settings.pop("synchronous", "full").lower()
    if chosen not in SYNCHRONOUS:
        raise FerryError(
            "X_INVARIANT",
            f"synchronous={chosen!r} is not a setting the sqlite driver offers",
            'pass synchronous="full" (durable through a power cut) or "normal" (durable '
            "through a crash of the process; the last commits may roll back on power loss)",
        )
    timeout = busy_timeout_ms
    if timeout is None:
        text = settings.pop("busy_timeout_ms", str(DEFAULT_BUSY_TIMEOUT_MS))
        if not text.isdigit():
            raise FerryError(
                "X_DB_URL_INVALID",
                f"the sqlite URL's busy_timeout_ms={text!r} is not a number of milliseconds",
                _URL_FIX,
            )
        timeout = int(text)
    require_count(
        timeout, what="sqlite busy_timeout_ms {}", fix="pass busy_timeout_ms=5000 (the default)"
    )
    settings.pop("synchronous", None)
    settings.pop("busy_timeout_ms", None)
    if settings:
        raise FerryError(
            "X_DB_URL_INVALID",
            f"the sqlite URL has parameter(s) {', '.join(sorted(settings))}, which the "
            "sqlite driver does not know",
            _URL_FIX,
        )
    return SqliteTarget(Path(raw).expanduser().absolute(), chosen, timeout)


def _from_url(url: str) -> tuple[str, dict[str, str]]:
    """The file path and the query parameters of a ``sqlite://`` URL."""
    parts = urlsplit(url)
    if parts.scheme != "sqlite" or parts.netloc not in ("", "localhost"):
        raise FerryError(
            "X_DB_URL_INVALID",
            f"the sqlite URL {url!r} names a host; a SQLite file is on this machine",
            _URL_FIX,
        )
    if not parts.path.startswith("/"):
        raise FerryError("X_DB_URL_INVALID", f"the sqlite URL {url!r} has no file path", _URL_FIX)
    # sqlite:///jobs.db has path "/jobs.db" (relative); sqlite:////srv/jobs.db "//srv/jobs.db".
    path = unquote(parts.path[1:])
    return path, {key.lower(): value for key, value in parse_qsl(parts.query)}
