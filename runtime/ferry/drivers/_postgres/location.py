"""Where a Postgres driver's runs live, as a credential-free URL (``JobDriver.location``)."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, unquote, urlsplit

_HAS_PORT = re.compile(r":\d+$")
DEFAULT_PORT = "5432"


def store_location(dsn: str, schema: str) -> str:
    """``postgresql://host:port/database?schema=name`` from ``dsn``: no user, no password,
    no other parameter, the port spelled out — so two URLs for one store (another password,
    another user, ``postgres://``) name it alike. Missing parts stay empty: they resolve
    the same way (``PGHOST``, the user's database) for both sides of one process."""
    parts = urlsplit(dsn)
    query = dict(parse_qsl(parts.query))
    # A socket directory given as ?host=/run/postgresql is spelled as libpq would: encoded.
    host = parts.netloc.rpartition("@")[2].lower() or quote(query.get("host", ""), safe="")
    if not _HAS_PORT.search(host):
        host = f"{host}:{query.get('port', DEFAULT_PORT)}"
    database = unquote(parts.path.lstrip("/")) or query.get("dbname", query.get("database", ""))
    return f"postgresql://{host}/{database}?schema={schema}"


def pool_location(pool: object, schema: str) -> str:
    """A borrowed pool's store has no URL to read; this names the pool itself, so two
    drivers on one pool and schema answer alike (and two pools on one database do not)."""
    return f"postgresql://pool-{id(pool):x}/?schema={schema}"
