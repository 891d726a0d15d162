"""The admin tools served by a ferry process: over stdio, or over streamable HTTP behind
a bearer-token gate (``ferry mcp``)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Receive, Scope, Send

from ferry._lifecycle import Role
from ferry._operations.access import Access
from ferry._serving import AsgiRole

MCP_PATH = "/mcp"


def mcp_role(server: MCPServer, access: Access, *, transport: str, host: str, port: int) -> Role:
    """``server`` as a role: on this process's stdio, or over HTTP at ``MCP_PATH``."""
    if transport == "stdio":
        return StdioRole(server)
    http_app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    return HttpRole(server, BearerOnly(http_app, access), host=host, port=port)


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

    def __init__(self, server: Any, app: ASGIApp, *, host: str, port: int) -> None:
        super().__init__(app, host=host, port=port)
        self._mcp = server

    async def run(self) -> None:
        async with self._mcp.session_manager.run():
            await super().run()


class BearerOnly:
    """Answer 401 to any HTTP request without a token the dashboard's access knows.

    The tools check the permission of each call again (read vs manage); this gate keeps
    an anonymous client from opening a session or even listing the tools.
    """

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self._app = app
        self._access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            authorization = headers.get(b"authorization", b"").decode("latin-1")
            bearer = authorization.lower().startswith("bearer ")
            if not bearer or self._access.level_of(authorization[7:].strip()) is None:
                body = (
                    b'{"code": "X_UNAUTHENTICATED", "message": "a job:read or job:manage '
                    b'bearer token is required", "fix": "send Authorization: Bearer <token>"}'
                )
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="ferry"'),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self._app(scope, receive, send)
