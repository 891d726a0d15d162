"""``ferry admin``: serve the jobs dashboard at ``/admin/jobs`` until SIGTERM."""

from __future__ import annotations

import argparse
import logging
import os
from typing import Any

from ferry._app import load_app
from ferry._cli.database import add_database_options
from ferry._cli.lifecycle import run_role
from ferry._cli.numbers import PORT
from ferry._cli.process_options import add_log_options
from ferry._extras import require_extra
from ferry._operations.access import Access, trusted_proxies
from ferry._operations.envelope import Outcome
from ferry.drivers.protocol import JobDriver

logger = logging.getLogger("ferry.admin")


def dashboard_options(parser: argparse.ArgumentParser, *, default_port: int) -> None:
    """Where the dashboard listens and who may use it (shared with ``ferry dev``)."""
    env = os.environ.get
    parser.add_argument("--host", default=env("ADMIN_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=PORT, default=env("ADMIN_PORT", str(default_port)))
    parser.add_argument(
        "--token-read", default=None, help="job:read token ($FERRY_ADMIN_TOKEN_READ)"
    )
    parser.add_argument(
        "--token-manage", default=None, help="job:manage token ($FERRY_ADMIN_TOKEN_MANAGE)"
    )
    trust_proxy_option(parser)
    parser.add_argument(
        "--insecure-dev",
        action="store_true",
        help="serve without any token (your own machine only)",
    )


def trust_proxy_option(parser: argparse.ArgumentParser) -> None:
    """``--trust-proxy ADDRESSES`` (``$FERRY_ADMIN_TRUST_PROXY``): the proxies whose
    ``X-Forwarded-For``/``-Proto`` the server believes (shared with ``ferry mcp``)."""
    parser.add_argument(
        "--trust-proxy",
        type=trusted_proxies,
        default=os.environ.get("FERRY_ADMIN_TRUST_PROXY", ""),
        metavar="ADDRESSES",
        help="the proxy in front of this server, by address or network (comma-separated, "
        "$FERRY_ADMIN_TRUST_PROXY): only its X-Forwarded-For/-Proto are believed",
    )


def register(subparsers: Any) -> None:
    """Add ``ferry admin``."""
    admin = subparsers.add_parser("admin", help="serve the jobs dashboard at /admin/jobs")
    add_database_options(admin)
    add_log_options(admin)
    admin.add_argument("--app", default=None, help="module[:api] whose tasks to show ($FERRY_APP)")
    dashboard_options(admin, default_port=8080)
    admin.set_defaults(handler=run_admin, command_path=["admin"])


async def run_admin(args: argparse.Namespace) -> Outcome:
    """Serve the dashboard until SIGTERM/SIGINT."""
    # Imported here: the CLI starts without Starlette, and a core install is refused by name.
    require_extra("dashboard", feature="`ferry admin` (the jobs dashboard)")
    from ferry._admin.app import admin_app
    from ferry._serving import AsgiRole

    # Refused before any connection: a dashboard without a token serves nothing.
    access = Access.from_options(
        args.token_read,
        args.token_manage,
        insecure_dev=args.insecure_dev,
    )
    tasks = (
        list(load_app(args.app).tasks.values()) if args.app or os.environ.get("FERRY_APP") else []
    )

    def build(driver: JobDriver) -> list[AsgiRole]:
        logger.info(
            "jobs.admin.serving", extra={"url": f"http://{args.host}:{args.port}/admin/jobs"}
        )
        return [
            AsgiRole(
                admin_app(driver, access=access, tasks=tasks),
                host=args.host,
                port=args.port,
                trusted_proxies=args.trust_proxy,
            )
        ]

    await run_role(args, process="admin", build=build)
    return Outcome("admin", "dashboard stopped")
