"""``ferry mcp``: the admin tools over stdio (for a local MCP client) or streamable HTTP.

Over stdio the client starts this process and the token comes from ``FERRY_MCP_TOKEN``
(the process's own environment, set in the client's config); over HTTP every request
carries ``Authorization: Bearer <token>`` and a request without a known token is answered
401 before it reaches the MCP layer. Which tokens exist and what they grant is the
dashboard's configuration (``FERRY_ADMIN_TOKEN_READ`` / ``FERRY_ADMIN_TOKEN_MANAGE``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from ferry._admin import Access
from ferry._admin.serve import DashboardRole
from ferry._app import load_app
from ferry._cli.database import add_database_options
from ferry._cli.envelope import Outcome
from ferry._cli.lifecycle import run_role
from ferry._lifecycle import Role
from ferry.drivers.protocol import JobDriver
from ferry.errors import FerryError

logger = logging.getLogger("ferry.mcp")

MCP_PATH = "/mcp"


def register(subparsers: Any) -> None:
    """Add ``ferry mcp``."""
    mcp = subparsers.add_parser("mcp", help="serve the admin tools to an MCP client")
    add_database_options(mcp)
    env = os.environ.get
    mcp.add_argument("--app", default=None, help="module[:api] whose tasks to serve ($FERRY_APP)")
    mcp.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default=env("FERRY_MCP_TRANSPORT", "stdio"),
        help="stdio (a client starts this process) or http (streamable HTTP at /mcp)",
    )
    mcp.add_argument("--host", default=env("MCP_HOST", "127.0.0.1"))
    mcp.add_argument("--port", type=int, default=int(env("MCP_PORT", "8090")))
    mcp.add_argument("--token-read", default=None, help="job:read token ($FERRY_ADMIN_TOKEN_READ)")
    mcp.add_argument(
        "--token-manage", default=None, help="job:manage token ($FERRY_ADMIN_TOKEN_MANAGE)"
    )
    mcp.set_defaults(handler=run_mcp, command_path=["mcp"])


async def run_mcp(args: argparse.Namespace) -> Outcome:
    """Serve the tools until the client hangs up (stdio) or SIGTERM/SIGINT (HTTP)."""
    access = Access.from_options(args.token_read, args.token_manage, insecure_dev=False)
    stdio_token = os.environ.get("FERRY_MCP_TOKEN")
    if args.transport == "stdio" and not stdio_token:
        raise FerryError(
            "X_UNAUTHENTICATED",
            "`ferry mcp` over stdio was started without FERRY_MCP_TOKEN, so every tool would "
            "refuse",
            'set "FERRY_MCP_TOKEN" in the MCP client\'s "env" for this server to a job:read '
            "or job:manage token",
        )
    # Imported here: every other command starts without loading the MCP SDK (about 0.8 s).
    from ferry._mcp import Backend, admin_tools

    tasks = (
        list(load_app(args.app).tasks.values()) if args.app or os.environ.get("FERRY_APP") else []
    )

    def build(driver: JobDriver) -> list[Role]:
        server = admin_tools(Backend(driver, access, tasks, stdio_token))
        if args.transport == "stdio":
            return [_StdioRole(server)]
        http_app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=args.host)
        app = BearerOnly(http_app, access)
        logger.info("jobs.mcp.serving", extra={"url": f"http://{args.host}:{args.port}{MCP_PATH}"})
        return [_HttpRole(server, app, host=args.host, port=args.port)]

    await run_role(args, process="mcp", build=build)
    return Outcome("mcp", "MCP server stopped", silent=args.transport == "stdio")


class _StdioRole:
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


class _HttpRole(DashboardRole):
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
