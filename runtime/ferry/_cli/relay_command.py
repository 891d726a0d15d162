"""``ferry relay`` (``ROLE=relay``): publish committed outbox entries as jobs until SIGTERM."""

from __future__ import annotations

import argparse
import os
from typing import Any

from prometheus_client import CollectorRegistry

from ferry._app import load_app
from ferry._cli.database import opened_driver
from ferry._cli.lifecycle import run_role
from ferry._cli.numbers import seconds, whole
from ferry._cli.process_options import add_process_options
from ferry._cli.roles import register_role
from ferry._operations.envelope import Outcome
from ferry._outbox import JobOutboxPublisher, OutboxRelay
from ferry.drivers.protocol import JobDriver


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
        type=seconds("--outbox-lease-seconds"),
        default=env("OUTBOX_LEASE_SECONDS", "30"),
        help="how long a claimed entry is held before another relay may take it",
    )
    parser.add_argument(
        "--outbox-batch",
        type=whole("--outbox-batch", 1, 10_000),
        default=env("OUTBOX_BATCH", "100"),
        help="entries claimed per pass",
    )
    parser.add_argument(
        "--retain-published",
        default=env("OUTBOX_RETAIN_PUBLISHED", "7d"),
        help="how long published entries are kept before pruning (e.g. 7d)",
    )


async def run_relay(args: argparse.Namespace) -> Outcome:
    api = load_app(args.app)
    relays: list[OutboxRelay] = []
    async with opened_driver(args, dsn=args.outbox_database_url) as outbox_driver:

        def build(queue: JobDriver) -> list[OutboxRelay]:
            relays.append(
                OutboxRelay(
                    # The outbox of the application database, or the queue's own.
                    source=outbox_driver or queue,
                    publisher=JobOutboxPublisher(api),
                    lease=args.outbox_lease_seconds,
                    batch=args.outbox_batch,
                    retain_published=args.retain_published,
                )
            )
            return relays

        await run_role(args, process="relay", build=build, registry=CollectorRegistry())
    return Outcome("relay", f"relay {relays[0].relay_id} stopped")


def register(subparsers: Any) -> None:
    relay = subparsers.add_parser("relay", help="publish committed outbox entries until SIGTERM")
    relay_options(relay)
    relay.set_defaults(handler=run_relay, command_path=["relay"])


register_role("relay", relay_options, run_relay)
