"""``ferry relay`` (``ROLE=relay``): publish committed outbox entries as jobs until SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
from typing import Any

from prometheus_client import CollectorRegistry

from ferry._app import load_app
from ferry._cli.database import configured_dsn, open_driver
from ferry._cli.envelope import Outcome
from ferry._cli.process_options import add_process_options
from ferry._cli.roles import register_role
from ferry._jobs.facade import set_job_driver
from ferry._logs import configure_logging
from ferry._metrics import start_metrics_server
from ferry._outbox import JobOutboxPublisher, OutboxRelay, postgres_outbox


def relay_options(parser: argparse.ArgumentParser) -> None:
    add_process_options(parser, declares="jobs")
    env = os.environ.get
    parser.add_argument(
        "--outbox-database-url",
        default=env("OUTBOX_DATABASE_URL"),
        help="the application database holding the outbox (default: the queue's database)",
    )
    parser.add_argument(
        "--outbox-lease-seconds",
        type=float,
        default=float(env("OUTBOX_LEASE_SECONDS", 30)),
        help="how long a claimed entry is held before another relay may take it",
    )
    parser.add_argument(
        "--outbox-batch",
        type=int,
        default=int(env("OUTBOX_BATCH", 100)),
        help="entries claimed per pass",
    )
    parser.add_argument(
        "--retain-published",
        default=env("OUTBOX_RETAIN_PUBLISHED", "7d"),
        help="how long published entries are kept before pruning (e.g. 7d)",
    )


async def run_relay(args: argparse.Namespace) -> Outcome:
    configure_logging(args.log_level, args.log_format)
    api = load_app(args.app)
    driver = await open_driver(args)
    set_job_driver(driver)
    queue_dsn = configured_dsn(args)
    assert queue_dsn is not None, "open_driver refuses a command with no database"
    store = postgres_outbox(
        args.outbox_database_url or queue_dsn, schema=driver.schema, clock=driver.clock
    )
    relay = OutboxRelay(
        store=store,
        publisher=JobOutboxPublisher(api),
        lease=args.outbox_lease_seconds,
        batch=args.outbox_batch,
        retain_published=args.retain_published,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    server = start_metrics_server(
        args.metrics_port, args.loop_lag_budget_seconds, registry=CollectorRegistry()
    )
    try:
        await store.open()
        await relay.run(stop)
    finally:
        server.close()
        await store.close()
        await driver.close()
    return Outcome("relay", f"relay {relay.relay_id} stopped")


def register(subparsers: Any) -> None:
    relay = subparsers.add_parser("relay", help="publish committed outbox entries until SIGTERM")
    relay_options(relay)
    relay.set_defaults(handler=run_relay, command_path=["relay"])


register_role("relay", relay_options, run_relay)
