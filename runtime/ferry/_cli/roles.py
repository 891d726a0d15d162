"""``ferry run``: one entrypoint for every role, chosen by ``ROLE``.

The container image runs ``ferry run``; the operator sets ``ROLE`` per Deployment. Each
role module registers its handler here, so adding a role never touches the dispatcher.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Awaitable, Callable
from typing import Any

from ferry._operations.envelope import Outcome
from ferry.errors import FerryError

RoleHandler = Callable[[argparse.Namespace], Awaitable[Outcome]]
RoleOptions = Callable[[argparse.ArgumentParser], None]

#: role name -> (add its options to a parser, run it)
ROLES: dict[str, tuple[RoleOptions, RoleHandler]] = {}


def register_role(name: str, options: RoleOptions, handler: RoleHandler) -> None:
    """Make ``ROLE=name`` run ``handler`` (with ``options`` added to ``ferry run``)."""
    ROLES[name] = (options, handler)


def register(subparsers: Any) -> None:
    run = subparsers.add_parser("run", help="run the role named by $ROLE")
    role = os.environ.get("ROLE", "")
    if role in ROLES:
        # The role's own options, defaults and help: `--lease-seconds` is a job lease for a
        # worker and a leader lease for a scheduler.
        ROLES[role][0](run)
    else:
        run.add_argument("rest", nargs=argparse.REMAINDER, help="the role's own options")
    run.set_defaults(handler=run_role, command_path=["run"])


async def run_role(args: argparse.Namespace) -> Outcome:
    role = os.environ.get("ROLE", "")
    if role not in ROLES:
        raise FerryError(
            "X_INVARIANT",
            f"ROLE={role!r} is not a role this ferry runs",
            f"set ROLE to one of: {', '.join(sorted(ROLES))}",
        )
    return await ROLES[role][1](args)
