"""``settings.FERRY``: which database and schema ferry uses in a Django project.

::

    FERRY = {
        "DATABASE": "default",   # the DATABASES alias whose connection enqueues join
        "SCHEMA": "ferry",       # ferry's tables live in this schema of that database
        "DATABASE_URL": None,    # the queue's DSN, if not derived from DATABASES[DATABASE]
    }

Every key is optional; an unknown key is refused (``X_INVARIANT``), not ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from ferry.errors import FerryError

_KEYS = {"DATABASE", "SCHEMA", "DATABASE_URL"}


@dataclass(frozen=True)
class FerrySettings:
    """``settings.FERRY``, read once at start-up."""

    database: str = "default"
    schema: str = "ferry"
    database_url: str | None = None


def ferry_settings() -> FerrySettings:
    """``settings.FERRY`` as ``FerrySettings`` (defaults for what it leaves out)."""
    from django.conf import settings

    given: dict[str, Any] = dict(getattr(settings, "FERRY", {}))
    unknown = sorted(set(given) - _KEYS)
    if unknown:
        raise FerryError(
            "X_INVARIANT",
            f"settings.FERRY has unknown key(s) {', '.join(unknown)}",
            f"use only {', '.join(sorted(_KEYS))}",
        )
    return FerrySettings(
        database=given.get("DATABASE", "default"),
        schema=given.get("SCHEMA", "ferry"),
        database_url=given.get("DATABASE_URL"),
    )


def dsn_of(database: dict[str, Any]) -> str:
    """A ``postgresql://`` DSN for one entry of ``settings.DATABASES`` (its current NAME:
    under the test runner, the test database's)."""
    user = quote(str(database.get("USER") or ""), safe="")
    password = quote(str(database.get("PASSWORD") or ""), safe="")
    credentials = f"{user}:{password}@" if user or password else ""
    host = str(database.get("HOST") or "")
    port = str(database.get("PORT") or "")
    query: dict[str, str] = {}
    if host.startswith("/"):  # a Unix socket directory
        query["host"], host = host, ""
    if port and not host:
        query["port"], port = port, ""
    location = f"{host}:{port}" if port else host
    name = quote(str(database.get("NAME") or ""), safe="")
    suffix = f"?{urlencode(query)}" if query else ""
    return f"postgresql://{credentials}{location}/{name}{suffix}"
