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
import logging
import os
import signal
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from ferry._admin import Access
from ferry._admin.serve import embedded_server
from ferry._app import load_app
from ferry._cli.database import add_database_options, open_driver
from ferry._cli.envelope import Outcome
from ferry._cli.scheduler_command import open_scheduler_store
from ferry._jobs.facade import set_job_driver
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
    # Imported here: every other command starts without loading the MCP SDK.
    from ferry._mcp import Backend, admin_tools

    tasks = (
        list(load_app(args.app).tasks.values()) if args.app or os.environ.get("FERRY_APP") else []
    )
    driver = await open_driver(args)
    set_job_driver(driver)  # run-now enqueues through the ambient driver
    store = await open_scheduler_store(args, driver)
    backend = Backend(driver, access, tasks, store, stdio_token)
    server = admin_tools(backend)
    try:
        if args.transport == "stdio":
            await server.run_stdio_async()
        else:
            await _serve_http(server, access, host=args.host, port=args.port)
    finally:
        await store.close()
        await driver.close()
    return Outcome("mcp", "MCP server stopped", silent=args.transport == "stdio")


async def _serve_http(server: Any, access: Access, *, host: str, port: int) -> None:
    app = BearerOnly(server.streamable_http_app(streamable_http_path=MCP_PATH, host=host), access)
    http = embedded_server(app, host=host, port=port)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: setattr(http, "should_exit", True))
    logger.info("jobs.mcp.serving", extra={"url": f"http://{host}:{port}{MCP_PATH}"})
    async with server.session_manager.run():
        await http.serve()


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
