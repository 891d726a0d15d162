"""The admin tools served by a ferry process: over stdio, or over streamable HTTP behind
a bearer-token gate (``ferry mcp``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Receive, Scope, Send

from ferry._clock import Clock
from ferry._lifecycle import Role
from ferry._operations.access import Access
from ferry._operations.throttle import TokenThrottle
from ferry._serving import AsgiRole
from ferry.errors import FerryError

MCP_PATH = "/mcp"


def mcp_role(
    server: MCPServer,
    access: Access,
    *,
    transport: str,
    host: str,
    port: int,
    clock: Clock,
    trusted_proxies: Sequence[str] = (),
) -> Role:
    """``server`` as a role: on this process's stdio, or over HTTP at ``MCP_PATH`` (behind
    the proxies ``trusted_proxies`` names, if any)."""
    if transport == "stdio":
        return StdioRole(server)
    http_app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    gate = BearerOnly(http_app, access, TokenThrottle(clock))
    return HttpRole(server, gate, host=host, port=port, trusted_proxies=trusted_proxies)


class StdioRole:
    """The tools over this process's stdin/stdout, until the client hangs up."""

    def __init__(self, server: Any) -> None:
        self._server = server
        self._serving: asyncio.Task[None] | None = None

    async def run(self) -> None:
        self._serving = asyncio.ensure_future(self._server.run_stdio_async())
        with contextlib.suppress(asyncio.CancelledError):
            await self._serving

    def drain(self, signal_name: str = "SIGTERM") -> None:
        if self._serving is not None:
            self._serving.cancel()


class HttpRole(AsgiRole):
    """The tools over streamable HTTP: the dashboard's server shape with the MCP session
    manager running around it."""

    def __init__(
        self,
        server: Any,
        app: ASGIApp,
        *,
        host: str,
        port: int,
        trusted_proxies: Sequence[str] = (),
    ) -> None:
        super().__init__(app, host=host, port=port, trusted_proxies=trusted_proxies)
        self._mcp = server

    async def run(self) -> None:
        async with self._mcp.session_manager.run():
            await super().run()


class BearerOnly:
    """Answer 401 to any HTTP request without a token the dashboard's access knows, and 429
    to an address with too many wrong ones lately (each logged as ``mcp.bearer.failed``).

    The tools check the permission of each call again (read vs manage); this gate keeps
    an anonymous client from opening a session or even listing the tools. The address is
    the peer the server reports (behind a proxy named with ``--trust-proxy``, the client it
    reports).
    """

    def __init__(self, app: ASGIApp, access: Access, throttle: TokenThrottle) -> None:
        self._app = app
        self._access = access
        self._throttle = throttle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            peer = scope.get("client")
            client = str(peer[0]) if peer else "unknown"
            wait_s = self._throttle.retry_after_s(client)
            if wait_s:
                refusal = FerryError(
                    "X_THROTTLED",
                    f"too many wrong bearer tokens from {client}: try again in {wait_s} s",
                    "check the token the client sends (FERRY_ADMIN_TOKEN_READ/_MANAGE)",
                )
                await _refuse(send, 429, refusal, [(b"retry-after", str(wait_s).encode())])
                return
            headers = dict(scope["headers"])
            authorization = headers.get(b"authorization", b"").decode("latin-1")
            if self._access.bearer_level(authorization) is None:
                self._throttle.failed(client, event="mcp.bearer")
                refusal = FerryError(
                    "X_UNAUTHENTICATED",
                    "a job:read or job:manage bearer token is required",
                    "send Authorization: Bearer <token>",
                )
                await _refuse(send, 401, refusal, [(b"www-authenticate", b'Bearer realm="ferry"')])
                return
            self._throttle.succeeded(client)
        await self._app(scope, receive, send)


async def _refuse(
    send: Send, status: int, refusal: FerryError, headers: list[tuple[bytes, bytes]]
) -> None:
    """Answer ``status`` with the refusal as JSON (code, message, fix)."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": json.dumps(refusal.to_dict()).encode()})
