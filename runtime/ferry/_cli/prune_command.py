"""``ferry prune``: one maintenance round now, by the retention options (for a one-off, or
a deployment that prunes from a CronJob)."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from ferry._cli.database import add_database_options, open_driver
from ferry._cli.retention_options import add_retention_options, retention_from
from ferry._cli.tables import rendering, table
from ferry._operations.envelope import Outcome, camel_keys

_KINDS = {
    "completed": ("completed and cancelled runs", "completed_ms"),
    "dead": ("dead runs", "dead_ms"),
    "slots": ("expired concurrency slots", None),
    "outbox": ("published outbox entries", "published_outbox_ms"),
    "webhook_attempts": ("webhook attempt rows", "webhook_attempts_ms"),
}


def register(subparsers: Any) -> None:
    prune = subparsers.add_parser(
        "prune", help="delete what the retention lets go, now (what maintenance does)"
    )
    add_database_options(prune)
    add_retention_options(prune)
    prune.set_defaults(handler=run_prune, command_path=["prune"])


async def run_prune(args: argparse.Namespace) -> Outcome:
    """Prune once and report what went, kind by kind."""
    policy = retention_from(args)
    driver = await open_driver(args)
    try:
        report = await driver.prune(policy)
    finally:
        await driver.close()
    pruned = asdict(report)
    kept = asdict(policy)
    # Slots have no retention: a slot goes once it expired.
    retention = {kind: kept[field] for kind, (_, field) in _KINDS.items() if field is not None}
    rows = [
        (what, pruned[kind], _shown(retention[kind]) if kind in retention else "expired")
        for kind, (what, _) in _KINDS.items()
    ]
    return Outcome(
        "prune",
        f"pruned {sum(pruned.values())} row(s) from schema {args.schema!r}",
        camel_keys({"pruned": pruned, "retention_ms": retention, "batch": policy.batch}),
        text=rendering(table(None, ["deleted", "rows", "ended more than"], rows)),
    )


def _shown(retention_ms: int | None) -> str:
    if retention_ms is None:
        return "(kept forever)"
    days, rest = divmod(retention_ms, 86_400_000)
    return f"{days} d ago" if not rest else f"{retention_ms / 1000:g} s ago"
