"""A TCP proxy a test controls: it relays every connection to one upstream (an address or
a unix socket) and can cut them all — a network partition between one process and its
store — and heal them again.

A cut holds the bytes in both directions: none is lost or reordered, and each reaches the
other side once the partition heals, as TCP delivers what it retransmits. A connection
opened during the cut is accepted but not connected onward until then. So a statement a
process sends across the partition reaches the server late — after another process may
have taken its work over — which is exactly what a fence exists to refuse.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit, urlunsplit

Upstream = tuple[int, str | tuple[str, int]]
"""Where the proxy connects: ``(socket family, address)``."""


def upstream_of(url: str) -> Upstream:
    """Where a ``postgresql://`` or ``redis://`` URL connects: a unix socket path (a
    ``?host=/dir`` socket directory, with PostgreSQL's socket name) or a (host, port)."""
    parts = urlsplit(url)
    default_port = 6379 if parts.scheme.startswith("redis") else 5432
    port = parts.port or default_port
    host = parse_qs(parts.query).get("host", [parts.hostname or "localhost"])[0]
    if host.startswith("/"):
        return socket.AF_UNIX, f"{host}/.s.PGSQL.{port}"
    return socket.AF_INET, (host, port)


class TcpProxy:
    """Accepts on ``host`` (a free port) and relays each connection to ``upstream``."""

    def __init__(self, upstream: Upstream, host: str = "127.0.0.1") -> None:
        self._upstream = upstream
        self._listener = socket.create_server((host, 0))
        self.host = host
        self.port = int(self._listener.getsockname()[1])
        self._flowing = threading.Event()
        self._flowing.set()
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="tcp-proxy", daemon=True)
        self._thread.start()

    @property
    def cut_off(self) -> bool:
        """True between ``cut()`` and ``heal()``."""
        return not self._flowing.is_set()

    def cut(self) -> None:
        """Stop every byte in both directions, holding them, and connect nothing new."""
        self._flowing.clear()

    def heal(self) -> None:
        """Deliver what was held, in order, and relay again."""
        self._flowing.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        self._flowing.wait()
        family, address = self._upstream
        server = socket.socket(family, socket.SOCK_STREAM)
        try:
            server.connect(address)
        except OSError:
            client.close()
            server.close()
            return
        with self._lock:
            if self._closed:
                client.close()
                server.close()
                return
            self._open.update((client, server))
        for source, sink in ((client, server), (server, client)):
            threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                self._flowing.wait()
                sink.sendall(chunk)
        self._flowing.wait()  # an end of stream is held across a cut like any byte
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
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() blocked on it
        self._listener.close()
        with self._lock:
            self._closed = True
            for end in self._open:
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()
            self._open.clear()
        self._flowing.set()  # release what waits, so every thread ends
        self._thread.join(timeout=5)


def proxied(url: str, proxy: TcpProxy) -> str:
    """``url`` pointed at ``proxy`` (credentials, path and other options kept; a socket
    directory option dropped)."""
    parts = urlsplit(url)
    credentials = parts.netloc.rpartition("@")[0]
    where = f"{proxy.host}:{proxy.port}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "host"])
    netloc = f"{credentials}@{where}" if credentials else where
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
