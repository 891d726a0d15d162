"""``ferry dev``: the whole app in one process — worker, scheduler, maintenance, dashboard.

On ``--db``/``DATABASE_URL`` when one is given — ``sqlite:///jobs.db`` runs everything on a
SQLite file with no server at all — otherwise on the embedded PostgreSQL under
``.ferry/pgdata``. Meant for a laptop, so without a token it makes one up and prints it;
``--insecure-dev`` drops the token altogether. It prints the ``DATABASE_URL`` (and
``FERRY_SCHEMA``) the other commands reach its database with — for the embedded server,
a socket path nobody should have to work out — and logs a line when each run starts and
when it settles (``RunLog``).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shlex
import sys
from typing import Any
from urllib.parse import urlsplit

from ferry._app import load_app
from ferry._cli.admin_command import dashboard_options
from ferry._cli.database import add_database_options, configured_dsn
from ferry._cli.lifecycle import run_role
from ferry._cli.numbers import seconds, whole
from ferry._cli.process_options import add_log_options
from ferry._extras import require_extra
from ferry._lifecycle import Role
from ferry._maintenance import Maintenance
from ferry._operations.access import Access
from ferry._operations.envelope import Outcome
from ferry._scheduler import Scheduler
from ferry._worker import job_worker
from ferry._worker.run_log import RunLog
from ferry.drivers._urls import redacted
from ferry.drivers.protocol import JobDriver


def register(subparsers: Any) -> None:
    """Add ``ferry dev``."""
    dev = subparsers.add_parser(
        "dev",
        help="worker + scheduler + dashboard in one process (embedded Postgres, or "
        "--db sqlite:///path.db)",
    )
    add_database_options(dev)
    add_log_options(dev)
    dev.add_argument("--app", default=None, help="module[:api] with the jobs and tasks")
    dev.add_argument("--concurrency", type=whole("--concurrency", 1, 10_000), default="10")
    dev.add_argument("--lease-seconds", type=seconds("--lease-seconds"), default="30")
    dev.add_argument(
        "--drain-seconds", type=seconds("--drain-seconds", positive=False), default="5"
    )
    dashboard_options(dev, default_port=8000)
    dev.set_defaults(handler=run_dev, command_path=["dev"])


async def run_dev(args: argparse.Namespace) -> Outcome:
    """Worker, scheduler and dashboard until SIGTERM/SIGINT drains them."""
    # Imported here: the CLI starts without Starlette, and a core install is refused by name.
    require_extra("dashboard", feature="`ferry dev` (its jobs dashboard)")
    from ferry._admin.app import admin_app
    from ferry._serving import AsgiRole

    api = load_app(args.app)
    token = args.token_manage or os.environ.get("FERRY_ADMIN_TOKEN_MANAGE")
    if token is None and not args.insecure_dev:
        token = secrets.token_urlsafe(16)
    access = Access.from_options(args.token_read, token, insecure_dev=args.insecure_dev)

    def build(driver: JobDriver) -> list[Role]:
        worker = job_worker(
            driver=driver,
            jobs=api.jobs.values(),
            concurrency=args.concurrency,
            lease_ms=int(args.lease_seconds * 1000),
            drain_seconds=args.drain_seconds,
            observer=RunLog(),
        )
        dashboard = AsgiRole(
            admin_app(driver, access=access, tasks=list(api.tasks.values())),
            host=args.host,
            port=args.port,
            trusted_proxies=args.trust_proxy,
        )
        scheduler = [Scheduler(driver=driver, tasks=api.tasks.values())] if api.tasks else []
        # The default retention, by the scheduler's leadership when there is a scheduler.
        maintenance = Maintenance(
            driver,
            holder=worker.worker_id,
            leading=(lambda: scheduler[0].leader.held) if scheduler else None,
        )
        url = f"http://{args.host}:{args.port}/admin/jobs"
        sys.stderr.write(
            f"ferry dev: {len(api.jobs)} job(s), {len(api.tasks)} task(s) on "
            f"{driver.where}\n{reach_it(args)}\ndashboard: {url}"
            + (f"  (token: {token})" if token and not args.insecure_dev else "  (no token)")
            + "\n"
        )
        return [worker, *scheduler, maintenance, dashboard]

    await run_role(args, process="dev", build=build, embedded=True)
    return Outcome("dev", "ferry dev stopped")


def reach_it(args: argparse.Namespace) -> str:
    """The environment other ``ferry`` commands reach this database with, ready to paste
    (a password shown as ``***``; the embedded server's URL has none)."""
    dsn = configured_dsn(args) or ""
    shown = redacted(dsn) if urlsplit(dsn).password else dsn
    exports = f"export DATABASE_URL={shlex.quote(shown)}"
    if args.schema != "ferry" and not dsn.startswith("sqlite:"):
        exports += f" FERRY_SCHEMA={shlex.quote(args.schema)}"
    return f"database: {exports}  (then `ferry jobs ls` and the rest reach it)"
