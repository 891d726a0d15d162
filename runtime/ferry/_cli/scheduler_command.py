"""``ferry scheduler`` (``ROLE=scheduler``): dispatch the app's tasks while leading."""

from __future__ import annotations

import argparse
import os
from typing import Any

from prometheus_client import CollectorRegistry

from ferry._app import load_app
from ferry._cli.database import configured_dsn, open_driver
from ferry._cli.envelope import Outcome
from ferry._cli.process_options import add_process_options
from ferry._cli.roles import register_role
from ferry._jobs.facade import set_job_driver
from ferry._logs import configure_logging
from ferry._metrics import SchedulerMetrics, start_metrics_server
from ferry._scheduler import (
    DEFAULT_LEADER_TTL_MS,
    DEFAULT_TICK_MS,
    PostgresSchedulerStore,
    Scheduler,
    postgres_scheduler_store,
    run_until_signalled,
)
from ferry.drivers._postgres import PostgresJobDriver
from ferry.errors import FerryError


def scheduler_options(parser: argparse.ArgumentParser) -> None:
    add_process_options(parser, declares="tasks")
    env = os.environ.get
    parser.add_argument(
        "--tick-seconds",
        type=float,
        default=float(env("TICK_SECONDS", DEFAULT_TICK_MS / 1000)),
        help="how often a round renews the lease and dispatches (default 1)",
    )
    parser.add_argument(
        "--lease-seconds",
        type=float,
        default=float(env("LEASE_SECONDS", DEFAULT_LEADER_TTL_MS / 1000)),
        help="leader lease TTL: a standby takes over this long after the leader stops",
    )


async def open_scheduler_store(
    args: argparse.Namespace, driver: PostgresJobDriver
) -> PostgresSchedulerStore:
    """The scheduler's rows in the driver's database and schema, on the driver's clock."""
    dsn = configured_dsn(args)
    assert dsn is not None, "open_driver refuses a command with no database"
    return postgres_scheduler_store(dsn, schema=driver.schema, clock=driver.clock)


async def run_scheduler(args: argparse.Namespace) -> Outcome:
    configure_logging(args.log_level, args.log_format)
    api = load_app(args.app)
    if not api.tasks:
        raise FerryError(
            "X_INVARIANT",
            f"application {args.app or os.environ.get('FERRY_APP')!r} declares no tasks, so "
            "the scheduler has nothing to dispatch",
            "hand the tasks module over with define_api(tasks=[my_app.tasks]), or do not run "
            "the scheduler role for this app",
        )
    driver = await open_driver(args)
    set_job_driver(driver)
    store = await open_scheduler_store(args, driver)
    metrics = SchedulerMetrics(CollectorRegistry())
    try:
        scheduler = Scheduler(
            driver=driver,
            store=store,
            tasks=api.tasks.values(),
            tick_ms=round(args.tick_seconds * 1000),
            lease_ms=round(args.lease_seconds * 1000),
            metrics=metrics,
        )
        # The scheduler binds this port only: liveness is /livez, and nothing routes
        # request traffic to a scheduler.
        server = start_metrics_server(
            args.metrics_port, args.loop_lag_budget_seconds, registry=metrics.registry
        )
        try:
            await run_until_signalled(scheduler)
        finally:
            server.close()
    finally:
        await store.close()
        await driver.close()
    return Outcome("scheduler", f"scheduler {scheduler.holder} stopped")


def register(subparsers: Any) -> None:
    scheduler = subparsers.add_parser(
        "scheduler", help="dispatch the app's tasks while holding the leader lease"
    )
    scheduler_options(scheduler)
    scheduler.set_defaults(handler=run_scheduler, command_path=["scheduler"])


register_role("scheduler", scheduler_options, run_scheduler)
