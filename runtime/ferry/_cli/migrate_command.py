"""``ferry migrate``: apply the schema migrations (also applied at every start)."""

from __future__ import annotations

import argparse
from typing import Any

from ferry._cli.database import add_database_options, open_driver
from ferry._cli.envelope import Outcome


def register(subparsers: Any) -> None:
    migrate = subparsers.add_parser("migrate", help="apply the schema migrations")
    add_database_options(migrate)
    migrate.set_defaults(handler=run_migrate, command_path=["migrate"])


async def run_migrate(args: argparse.Namespace) -> Outcome:
    driver = await open_driver(args)
    try:
        applied = await driver.migrate()
    finally:
        await driver.close()
    return Outcome("migrate", f"schema {args.schema!r} is up to date", {"applied": applied})
