"""One process lifecycle for every role: the first signal drains, the second exits now.

A ferry process runs one or more roles (a worker, a scheduler, a relay, a dashboard —
``ferry dev`` runs several). SIGTERM or SIGINT asks every role to drain: the worker aborts
held runs with ``X_DRAINING`` and waits out its budget, the scheduler finishes its round
and hands the lease over, the relay finishes its pass. A second signal means the operator
will not wait: the process exits at once, without running anyone's cleanup, so unsettled
leases lapse exactly as if the pod had been killed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Sequence
from typing import Protocol

logger = logging.getLogger("ferry")

FORCED_EXIT_STATUS = 1
_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Role(Protocol):
    """A long-running part of a ferry process."""

    async def run(self) -> None:
        """Serve until drained (or stopped), then return."""
        ...

    def drain(self, signal_name: str) -> None:
        """Stop taking new work and finish what is held; ``run`` then returns."""
        ...


async def run_roles(roles: Sequence[Role], *, process: str) -> None:
    """Run ``roles`` until all have returned, owning SIGTERM/SIGINT while they run."""
    loop = asyncio.get_running_loop()
    received: list[str] = []

    def on_signal(name: str) -> None:
        if received:
            logger.error("jobs.process.forced-exit", extra={"roles": process, "signal": name})
            for handler in logging.getLogger().handlers:
                handler.flush()
            os._exit(FORCED_EXIT_STATUS)
        received.append(name)
        logger.warning("jobs.process.draining", extra={"roles": process, "signal": name})
        for role in roles:
            role.drain(name)

    for sig in _SIGNALS:
        loop.add_signal_handler(sig, on_signal, sig.name)
    try:
        running = [asyncio.ensure_future(role.run()) for role in roles]
        try:
            await asyncio.gather(*running)
        finally:
            # One role failing stops the process: drain the others, then wait for them.
            for role, task in zip(roles, running, strict=True):
                if not task.done():
                    role.drain("role-failed")
            await asyncio.gather(*running, return_exceptions=True)
    finally:
        for sig in _SIGNALS:
            loop.remove_signal_handler(sig)
