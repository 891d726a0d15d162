"""The test PostgreSQL, reachable from pods: a TCP relay on the node's address.

The suite's server listens where only this machine's processes reach it (the embedded
pgserver on a unix socket, or whatever ``DATABASE_URL`` names, often loopback). A pod has
its own network namespace, so the relay listens on the node's address on the pods' bridge
and copies bytes to the real server; PostgreSQL's own authentication still applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from support.tcp_proxy import TcpProxy, upstream_of


@dataclass(frozen=True)
class PodDatabase:
    """A database of the test server: ``host_dsn`` from this process, ``pod_dsn`` from pods."""

    host_dsn: str
    pod_dsn: str


def relayed_dsn(dsn: str, host: str, port: int, database: str) -> str:
    """``dsn`` pointed at the relay and at ``database`` (user and password kept)."""
    parts = urlsplit(dsn)
    credentials = parts.netloc.rpartition("@")[0]
    netloc = f"{credentials}@{host}:{port}" if credentials else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, f"/{database}", "", ""))


def with_database(dsn: str, database: str) -> str:
    """``dsn`` with its database replaced (host, socket and options kept)."""
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, parts.netloc, f"/{database}", parts.query, ""))


class PgRelay(TcpProxy):
    """Accepts on ``host`` (a free port) and relays each connection to ``dsn``'s server."""

    def __init__(self, dsn: str, host: str) -> None:
        super().__init__(upstream_of(dsn), host)
