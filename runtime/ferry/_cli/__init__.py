"""``ferry``: the command line. Every command takes ``--json``.

Each command group lives in its own module with a ``register(subparsers)`` that adds its
parsers and binds a handler ``async (args) -> Outcome``; this module only dispatches.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ferry import _event_loop as event_loop
from ferry._cli import (
    admin_command,
    dev_command,
    doctor_command,
    jobs_commands,
    mcp_command,
    migrate_command,
    prune_command,
    queues_commands,
    relay_command,
    roles,
    scheduler_command,
    tasks_commands,
    worker_command,
)
from ferry._cli.database import configured_dsn
from ferry._logs import configure_logging
from ferry._operations.envelope import Outcome
from ferry.drivers._url import connection_refusal
from ferry.errors import FerryError

#: Every command group; ``roles`` last, so ``ferry run`` sees every registered role.
_GROUPS = (
    worker_command,
    migrate_command,
    prune_command,
    jobs_commands,
    scheduler_command,
    tasks_commands,
    relay_command,
    queues_commands,
    doctor_command,
    admin_command,
    mcp_command,
    dev_command,
    roles,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ferry", description="Durable background work for Python on PostgreSQL (or SQLite)."
    )
    parser.add_argument("--json", action="store_true", help="print the JSON envelope (anywhere)")
    parser.add_argument("--log-level", default="INFO", help="logging level (INFO, DEBUG, …)")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for group in _GROUPS:
        group.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns (and, as a script, exits with) its exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    # ``--json`` may stand anywhere (``ferry jobs ls --json``): it is one switch for every
    # command, so it is taken out before the per-command parsers see the words.
    as_json = "--json" in words
    words = [word for word in words if word != "--json"]
    args = build_parser().parse_args(words)
    # Text lines carry each event's fields (job id, code, attempt, …); a role given
    # --log-format json reconfigures this when it starts.
    configure_logging(args.log_level, "text")
    command = " ".join(args.command_path)
    try:
        outcome: Outcome = event_loop.run(lambda: args.handler(args))
    except FerryError as refused:
        outcome = Outcome.refused(command, refused)
    except KeyboardInterrupt:
        sys.stderr.write(f"ferry {command}: interrupted\n")
        return 130
    except Exception as error:
        # The one error boundary: a database that went away mid-command is a refusal like
        # one that was never there (the driver's open already words those), not a traceback.
        dsn = configured_dsn(args) if "database_url" in args else None
        refusal = connection_refusal(error, dsn)
        if refusal is None:
            raise
        outcome = Outcome.refused(command, refusal)
    return outcome.emit(as_json=as_json)
