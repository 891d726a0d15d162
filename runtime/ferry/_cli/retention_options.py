"""Retention settings, by flag or environment: ``ferry prune``, the scheduler's maintenance
and ``ferry worker --maintenance`` read the same ones."""

from __future__ import annotations

import argparse
import os

from ferry._cli.numbers import whole
from ferry._duration import to_ms
from ferry._maintenance import DEFAULT_EVERY_MS
from ferry.drivers.protocol import RetentionPolicy

MAX_PRUNE_BATCH = 100_000
"""The most rows one delete statement removes: a batch is one transaction's locks."""
FOREVER = "forever"
"""A retention of ``forever`` keeps that kind of row."""

_RETENTIONS = (
    # flag, environment variable, default, what it keeps
    ("--retain-completed", "RETAIN_COMPLETED", "7d", "completed and cancelled runs"),
    ("--retain-dead", "RETAIN_DEAD", "30d", "dead runs"),
    ("--retain-published", "OUTBOX_RETAIN_PUBLISHED", "7d", "published outbox entries"),
    ("--retain-webhook-attempts", "RETAIN_WEBHOOK_ATTEMPTS", "30d", "webhook attempt rows"),
)


def add_retention_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--retain-completed --retain-dead --retain-published --retain-webhook-attempts
    --prune-batch`` (each also from its environment variable)."""
    env = os.environ.get
    for flag, variable, default, what in _RETENTIONS:
        parser.add_argument(
            flag,
            default=env(variable, default),
            help=f"how long {what} are kept after they end (${variable}, default {default}; "
            f"{FOREVER!r} keeps them)",
        )
    parser.add_argument(
        "--prune-batch",
        type=whole("--prune-batch", 1, MAX_PRUNE_BATCH),
        default=env("PRUNE_BATCH", "1000"),
        help=f"rows per delete statement ($PRUNE_BATCH, default 1000, at most {MAX_PRUNE_BATCH})",
    )


def add_maintenance_options(parser: argparse.ArgumentParser) -> None:
    """The retention options and ``--prune-every`` (``$PRUNE_EVERY``) of a maintaining role."""
    add_retention_options(parser)
    parser.add_argument(
        "--prune-every",
        default=os.environ.get("PRUNE_EVERY", f"{DEFAULT_EVERY_MS // 1000}s"),
        help="how often the maintenance holder prunes ($PRUNE_EVERY, default 60s)",
    )


def retention_from(args: argparse.Namespace) -> RetentionPolicy:
    """The ``RetentionPolicy`` the retention options name."""
    completed, dead, published, attempts = (
        _retention_ms(getattr(args, flag[2:].replace("-", "_")), flag) for flag, *_ in _RETENTIONS
    )
    return RetentionPolicy(
        completed_ms=completed,
        dead_ms=dead,
        published_outbox_ms=published,
        webhook_attempts_ms=attempts,
        batch=args.prune_batch,
    )


def prune_every_ms(args: argparse.Namespace) -> int:
    """``--prune-every`` in milliseconds."""
    return to_ms(args.prune_every, what="--prune-every")


def _retention_ms(text: str, flag: str) -> int | None:
    if text.strip() == FOREVER:
        return None
    return to_ms(text, what=flag)
