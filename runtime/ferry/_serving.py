"""Serving an ASGI app as a role of a ferry process: the dashboard (``ferry admin``,
``ferry dev``) and the MCP tools over HTTP (``ferry mcp --transport http``).

uvicorn and Starlette come with the ``dashboard`` and ``mcp`` extras: the commands ask for
theirs before they import this module."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import uvicorn
from starlette.types import ASGIApp


class EmbeddedServer(uvicorn.Server):
    """A uvicorn server that leaves the process's signals to its owner.

    uvicorn captures SIGINT/SIGTERM itself and re-raises them when it stops; in a ferry
    process ``ferry._lifecycle`` owns the signals, so the owner stops this server by
    setting ``should_exit`` instead.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Capture nothing: the owner of the process handles its signals."""
        yield


class AsgiRole:
    """An ASGI app as a role of a ferry process: ``run`` serves, ``drain`` stops serving."""

    def __init__(
        self, app: ASGIApp, *, host: str, port: int, trusted_proxies: Sequence[str] = ()
    ) -> None:
        self.server = embedded_server(app, host=host, port=port, trusted_proxies=trusted_proxies)

    async def run(self) -> None:
        await self.server.serve()

    def drain(self, signal_name: str = "SIGTERM") -> None:
        self.server.should_exit = True


def embedded_server(
    app: ASGIApp, *, host: str, port: int, trusted_proxies: Sequence[str] = ()
) -> EmbeddedServer:
    """A server for ``app`` on ``host:port``, quiet except for warnings.

    ``X-Forwarded-For``/``-Proto`` are believed only from ``trusted_proxies`` (addresses or
    networks): uvicorn's own default trusts them from 127.0.0.1 (or ``$FORWARDED_ALLOW_IPS``),
    which would let any local process, or a sidecar relaying a client's headers, pick the
    address the sign-in throttle counts and the scheme the cookie's ``Secure`` follows.
    """
    return EmbeddedServer(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="warning",
            lifespan="off",
            proxy_headers=bool(trusted_proxies),
            forwarded_allow_ips=list(trusted_proxies) or [],
        )
    )
