"""The one port a ferry process binds: ``/metrics`` and a liveness probe, ``/livez``.

HTTP is served from a thread, not the event loop, so a scrape still answers while the
loop is busy — and so liveness can tell a *wedged* loop from a closed port: the loop
stamps a heartbeat every tick, and ``/livez`` fails once the last stamp is older than the
lag budget. A probe served by the loop itself would simply time out, indistinguishable
from a network blip; this one says why.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from ferry.errors import FerryError

DEFAULT_METRICS_PORT = 9090
DEFAULT_LOOP_LAG_BUDGET_S = 10.0
"""How long the event loop may go without running a callback before liveness fails."""


class LoopHeartbeat:
    """A monotonic stamp the event loop refreshes every ``interval_s``; read from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, interval_s: float) -> None:
        self._loop = loop
        self._interval_s = interval_s
        self._stamp = time.monotonic()
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """Begin stamping (call on the loop's thread)."""
        self._tick()

    def stop(self) -> None:
        """Stop stamping."""
        if self._handle is not None:
            self._handle.cancel()

    def lag_s(self) -> float:
        """Seconds since the loop last ran the stamp."""
        return time.monotonic() - self._stamp

    def _tick(self) -> None:
        self._stamp = time.monotonic()
        self._handle = self._loop.call_later(self._interval_s, self._tick)


class MetricsServer:
    """A running metrics/liveness server; ``close()`` stops it and the loop heartbeat."""

    def __init__(self, server: ThreadingHTTPServer, heartbeat: LoopHeartbeat) -> None:
        self._server = server
        self._heartbeat = heartbeat
        self._thread = threading.Thread(
            target=server.serve_forever, name="ferry-metrics", daemon=True
        )
        self._thread.start()

    @property
    def port(self) -> int:
        """The bound port (useful when started on port 0)."""
        return int(self._server.server_address[1])

    def close(self) -> None:
        """Stop serving and release the port."""
        self._heartbeat.stop()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def start_metrics_server(
    port: int = DEFAULT_METRICS_PORT,
    loop_lag_budget_s: float = DEFAULT_LOOP_LAG_BUDGET_S,
    *,
    registry: CollectorRegistry = REGISTRY,
    host: str = "",
) -> MetricsServer:
    """Serve ``/metrics`` and ``/livez`` on ``port``; call it from the running event loop.

    ``/livez`` answers 200 while the loop ran a callback within ``loop_lag_budget_s``, and
    503 once it has not (a body blocking the loop, a deadlock): the probe that restarts a
    wedged pod, not only a crashed one.
    """
    heartbeat = LoopHeartbeat(asyncio.get_running_loop(), max(loop_lag_budget_s / 4, 0.05))
    handler = _handler_for(registry, heartbeat, loop_lag_budget_s)
    try:
        server = ThreadingHTTPServer((host, port), handler)
    except OSError as error:
        raise FerryError(
            "X_INVARIANT",
            f"metrics port {port} cannot be bound ({error.strerror or error})",
            "set METRICS_PORT (or --metrics-port) to a free port; each process needs its own",
        ) from None
    server.daemon_threads = True
    heartbeat.start()
    return MetricsServer(server, heartbeat)


def _handler_for(
    registry: CollectorRegistry, heartbeat: LoopHeartbeat, budget_s: float
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, CONTENT_TYPE_LATEST, generate_latest(registry))
            elif path == "/livez":
                lag = heartbeat.lag_s()
                alive = lag <= budget_s
                body = {"ok": alive, "loop_lag_s": round(lag, 3), "budget_s": budget_s}
                self._send(200 if alive else 503, "application/json", json.dumps(body).encode())
            else:
                self._send(404, "text/plain", b"not found: try /metrics or /livez\n")

        def _send(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Probes every few seconds are not news; keep them out of the log."""

    return Handler
