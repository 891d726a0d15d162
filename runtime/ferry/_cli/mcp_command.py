"""``ferry mcp``: the admin tools over stdio (for a local MCP client) or streamable HTTP.

Over stdio the client starts this process and the token comes from ``FERRY_MCP_TOKEN``
(the process's own environment, set in the client's config); over HTTP every request
carries ``Authorization: Bearer <token>`` and a request without a known token is answered
401 before it reaches the MCP layer. Which tokens exist and what they grant is the
dashboard's configuration (``FERRY_ADMIN_TOKEN_READ`` / ``FERRY_ADMIN_TOKEN_MANAGE``).
"""

from __future__ import annotations

import argparse
import logging
import os
from typing import Any

from ferry._app import load_app
from ferry._cli.admin_command import trust_proxy_option
from ferry._cli.database import add_database_options
from ferry._cli.lifecycle import run_role
from ferry._cli.numbers import PORT
from ferry._extras import require_extra
from ferry._lifecycle import Role
from ferry._operations.access import Access
from ferry._operations.envelope import Outcome
from ferry.drivers.protocol import JobDriver
from ferry.errors import FerryError

logger = logging.getLogger("ferry.mcp")


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
    mcp.add_argument("--port", type=PORT, default=env("MCP_PORT", "8090"))
    mcp.add_argument("--token-read", default=None, help="job:read token ($FERRY_ADMIN_TOKEN_READ)")
    mcp.add_argument(
        "--token-manage", default=None, help="job:manage token ($FERRY_ADMIN_TOKEN_MANAGE)"
    )
    trust_proxy_option(mcp)
    mcp.set_defaults(
        handler=run_mcp,
        command_path=["mcp"],
        speaks_on_stdout=lambda args: args.transport == "stdio",
    )


async def run_mcp(args: argparse.Namespace) -> Outcome:
    """Serve the tools until the client hangs up (stdio) or SIGTERM/SIGINT (HTTP)."""
    stdio_token = os.environ.get("FERRY_MCP_TOKEN")
    if args.transport == "stdio" and not stdio_token:
        raise FerryError(
            "X_UNAUTHENTICATED",
            "`ferry mcp` over stdio was started without FERRY_MCP_TOKEN, so every tool would "
            "refuse",
            'set "FERRY_MCP_TOKEN" in the MCP client\'s "env" for this server to a job:read '
            "or job:manage token",
        )
    access = Access.from_options(args.token_read, args.token_manage, insecure_dev=False)
    # Imported here: every other command starts without the MCP SDK (about 0.8 s), and a
    # core install without ferry[mcp] is refused by name.
    require_extra("mcp", feature="`ferry mcp` (the admin tools for an MCP client)")
    from ferry._mcp import Backend, admin_tools
    from ferry._mcp.serve import MCP_PATH, mcp_role

    tasks = (
        list(load_app(args.app).tasks.values()) if args.app or os.environ.get("FERRY_APP") else []
    )

    def build(driver: JobDriver) -> list[Role]:
        server = admin_tools(Backend(driver, access, tasks, stdio_token))
        role = mcp_role(
            server,
            access,
            transport=args.transport,
            host=args.host,
            port=args.port,
            clock=driver.clock,
            trusted_proxies=args.trust_proxy,
        )
        if args.transport == "http":
            url = f"http://{args.host}:{args.port}{MCP_PATH}"
            logger.info("jobs.mcp.serving", extra={"url": url})
        return [role]

    await run_role(args, process="mcp", build=build)
    return Outcome("mcp", "MCP server stopped", silent=args.transport == "stdio")
