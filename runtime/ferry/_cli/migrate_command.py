"""``ferry migrate``: apply the schema migrations (also applied at every start)."""

from __future__ import annotations

import argparse
from typing import Any

from ferry._cli.database import add_database_options, driver_for
from ferry._operations.envelope import Outcome


def register(subparsers: Any) -> None:
    migrate = subparsers.add_parser("migrate", help="apply the schema migrations")
    add_database_options(migrate)
    migrate.set_defaults(handler=run_migrate, command_path=["migrate"])


async def run_migrate(args: argparse.Namespace) -> Outcome:
    """Apply what the schema lacks and say what that was (nothing is applied before this:
    the driver is not opened first, so a fresh schema reports every migration)."""
    driver = driver_for(args)
    try:
        applied = await driver.migrate()
    finally:
        await driver.close()
    labels = {m.version: m.label for m in driver.migrations}
    names = [labels[version] for version in applied]
    newest = driver.migrations[-1].label if driver.migrations else "no migrations"
    summary = (
        f"{driver.where} was already up to date (at {newest})"
        if not applied
        else f"applied {', '.join(names)} to {driver.where}; it is up to date (at {newest})"
    )
    return Outcome("migrate", summary, {"applied": applied, "migrations": names, "at": newest})
