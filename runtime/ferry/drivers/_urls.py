"""Database URLs in messages: never with their password."""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

_SECRET_PARAMETERS = frozenset({"password", "sslpassword", "passfile", "sslkey"})


def redacted(dsn: str) -> str:
    """``dsn`` with its password (and any secret query parameter) replaced by ``***``."""
    try:
        parts = urlsplit(dsn)
        netloc = parts.netloc
        if parts.password is not None:
            user, _, host = netloc.rpartition("@")
            netloc = f"{user.partition(':')[0]}:***@{host}"
        query = urlencode(
            [
                (key, "***" if key in _SECRET_PARAMETERS else value)
                for key, value in parse_qsl(parts.query, keep_blank_values=True)
            ],
            safe="/*",
        )
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return "the database URL"


def scrubbed(text: str, dsn: str | None) -> str:
    """``text`` with every secret of ``dsn`` taken out, should an error echo one."""
    if not dsn:
        return text
    secrets: list[str] = []
    try:
        parts = urlsplit(dsn)
        if parts.password:
            secrets += [parts.password, unquote(parts.password)]
        secrets += [v for k, v in parse_qsl(parts.query) if k in _SECRET_PARAMETERS and v]
    except ValueError:
        pass
    for secret in secrets:
        text = text.replace(secret, "***")
    return text
