"""``ferry``: the command line. Every command takes ``--json``.

Each command group lives in its own module with a ``register(subparsers)`` that adds its
parsers and binds a handler ``async (args) -> Outcome``; this module only dispatches.
stdout carries the result alone (the envelope, or the table); refusals, logs and a failed
application import's traceback go to stderr. A command that speaks a protocol on stdout
(``ferry mcp`` over stdio) has even its envelope written to stderr, so a refusal at its
start reaches the client as a clean exit, never as a line it cannot parse.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from contextvars import ContextVar
from typing import NoReturn

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
    workers_command,
)
from ferry._cli.database import configured_dsn
from ferry._cli.termination import record_refusal
from ferry._identity import ferry_version
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
    workers_command,
    doctor_command,
    admin_command,
    mcp_command,
    dev_command,
    roles,
)


_parsing: ContextVar[str] = ContextVar("ferry_cli_parsing", default="ferry")


class _Parser(argparse.ArgumentParser):
    """argparse, refusing a command line that does not parse with ``X_USAGE`` (so
    ``--json`` gets the envelope) instead of printing usage and exiting 2."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # Every subcommand's parser passes here: the deepest one names the command a
        # refusal raised while parsing (a flag out of bounds) belongs to.
        _parsing.set(self.prog)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        raise FerryError(
            "X_USAGE",
            f"{self.prog}: {message}",
            f"run `{self.prog} --help` for the commands and flags it takes",
        )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ferry", description="Durable background work for Python on PostgreSQL (or SQLite)."
    )
    parser.add_argument("--version", action="version", version=f"ferry {ferry_version()}")
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
    try:
        args = build_parser().parse_args(words)
    except FerryError as refused:  # a line that does not parse, or a number out of bounds
        command = _parsing.get().removeprefix("ferry").strip() or "ferry"
        return Outcome.refused(command, refused).emit(as_json=as_json)
    # Text lines carry each event's fields (job id, code, attempt, …); a role given
    # --log-format json reconfigures this when it starts.
    configure_logging(args.log_level, "text")
    command = " ".join(args.command_path)
    owns_stdout = getattr(args, "speaks_on_stdout", lambda _: False)(args)
    out = sys.stderr if owns_stdout else sys.stdout
    try:
        outcome: Outcome = event_loop.run(lambda: args.handler(args))
    except FerryError as refused:
        if refused.detail:
            sys.stderr.write(refused.detail)
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
    if args.command_path[0] in {"run", *roles.ROLES}:
        record_refusal(outcome)
    return outcome.emit(as_json=as_json, out=out)
