"""``run_role``: how every long-running command lives — worker, scheduler, relay, admin, dev.

One shape for all of them: logging configured, the driver opened (and migrated) and made
the ambient one, the roles built on it, the metrics port served when the process has
metrics, the signals owned by ``ferry._lifecycle.run_roles`` (first drains, second exits
now), and everything handed back in reverse order however the roles ended.
"""

from __future__ import annotations

import argparse
import gc
from collections.abc import Callable, Sequence

from prometheus_client import CollectorRegistry

from ferry._cli.database import configured_dsn, open_driver
from ferry._jobs.facade import set_job_driver
from ferry._lifecycle import Role, run_roles
from ferry._logs import configure_logging
from ferry._metrics import start_metrics_server
from ferry.drivers.protocol import JobDriver
from ferry.embedded import embedded_database_url


async def run_role(
    args: argparse.Namespace,
    *,
    process: str,
    build: Callable[[JobDriver], Sequence[Role]],
    registry: CollectorRegistry | None = None,
    embedded: bool = False,
) -> None:
    """Run the roles ``build`` makes on the configured driver until they have drained.

    ``registry`` is served on ``--metrics-port`` with ``/livez`` (a process without one,
    such as ``ferry admin``, binds no metrics port); ``embedded`` lets a process without
    ``DATABASE_URL`` use the embedded PostgreSQL (``ferry dev``; ``--db sqlite:///…`` needs
    no server at all).
    """
    configure_logging(args.log_level, getattr(args, "log_format", "text"))
    if embedded and not configured_dsn(args):
        args.database_url = embedded_database_url()
    driver = await open_driver(args)
    try:
        set_job_driver(driver)
        roles = build(driver)
        # What is loaded by now (modules, the app, the driver) lives as long as the process.
        # Collected once and frozen, it is left out of every later full collection, which
        # a busy worker triggers every few thousand runs and which otherwise walks all of
        # it (measured: about a tenth of a no-op run's CPU).
        gc.collect()
        gc.freeze()
        server = (
            start_metrics_server(args.metrics_port, args.loop_lag_budget_seconds, registry=registry)
            if registry is not None
            else None
        )
        try:
            await run_roles(roles, process=process)
        finally:
            if server is not None:
                server.close()
    finally:
        set_job_driver(None)
        await driver.close()
