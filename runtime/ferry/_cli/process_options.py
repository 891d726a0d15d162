"""The options every long-running role shares: database, app, metrics port, logs."""

from __future__ import annotations

import argparse
import os

from ferry._cli.database import add_database_options
from ferry._cli.numbers import PORT, seconds
from ferry._logs import LOG_FORMATS
from ferry._metrics import DEFAULT_LOOP_LAG_BUDGET_S, DEFAULT_METRICS_PORT


def add_process_options(parser: argparse.ArgumentParser, *, declares: str) -> None:
    """Add ``--database-url --schema --app --metrics-port --loop-lag-budget-seconds
    --log-format``; ``declares`` says what the app must hold ("jobs", "tasks")."""
    env = os.environ.get
    add_database_options(parser)
    parser.add_argument(
        "--app", default=None, help=f"module[:api] with the {declares} (or $FERRY_APP)"
    )
    parser.add_argument(
        "--metrics-port",
        type=PORT,
        default=env("METRICS_PORT", str(DEFAULT_METRICS_PORT)),
        help="port serving /metrics and /livez (default $METRICS_PORT or 9090)",
    )
    parser.add_argument(
        "--loop-lag-budget-seconds",
        type=seconds("--loop-lag-budget-seconds"),
        default=env("LOOP_LAG_BUDGET_SECONDS", str(DEFAULT_LOOP_LAG_BUDGET_S)),
        help="/livez fails once the event loop has been stuck this long",
    )
    add_log_options(parser)


def add_log_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--log-format`` (``$LOG_FORMAT``): text lines with their fields, or JSON."""
    parser.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default=os.environ.get("LOG_FORMAT", "text"),
        help="text | json",
    )
