"""The test PostgreSQL, reachable from pods: a TCP relay on the node's address.

The suite's server listens where only this machine's processes reach it (the embedded
pgserver on a unix socket, or whatever ``DATABASE_URL`` names, often loopback). A pod has
its own network namespace, so the relay listens on the node's address on the pods' bridge
and copies bytes to the real server; PostgreSQL's own authentication still applies.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit, urlunsplit


@dataclass(frozen=True)
class PodDatabase:
    """A database of the test server: ``host_dsn`` from this process, ``pod_dsn`` from pods."""

    host_dsn: str
    pod_dsn: str


def upstream_address(dsn: str) -> tuple[int, str | tuple[str, int]]:
    """Where ``dsn`` connects: a unix socket path or a (host, port)."""
    parts = urlsplit(dsn)
    port = parts.port or 5432
    host = parse_qs(parts.query).get("host", [parts.hostname or "localhost"])[0]
    if host.startswith("/"):
        return socket.AF_UNIX, f"{host}/.s.PGSQL.{port}"
    return socket.AF_INET, (host, port)


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


class PgRelay:
    """Accepts on ``host`` (a free port) and relays each connection to ``dsn``'s server."""

    def __init__(self, dsn: str, host: str) -> None:
        self._upstream = upstream_address(dsn)
        self._listener = socket.create_server((host, 0))
        self.host = host
        self.port = int(self._listener.getsockname()[1])
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, name="pg-relay", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            family, address = self._upstream
            server = socket.socket(family, socket.SOCK_STREAM)
            try:
                server.connect(address)
            except OSError:
                client.close()
                server.close()
                continue
            with self._lock:
                self._open.update((client, server))
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
        with self._lock:
            for end in (source, sink):
                if end in self._open:
                    self._open.discard(end)
                    end.close()

    def close(self) -> None:
        """Stop accepting and cut every relayed connection."""
        self._listener.close()
        with self._lock:
            for end in self._open:
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()
            self._open.clear()
        self._thread.join(timeout=5)
