"""``ferry worker``: claim and run the app's jobs until SIGTERM drains it."""

from __future__ import annotations

import argparse
import os
from typing import Any

from prometheus_client import CollectorRegistry

from ferry._app import load_app
from ferry._bounds import INT32_MAX
from ferry._cli.lifecycle import run_role
from ferry._cli.numbers import seconds, whole
from ferry._cli.process_options import add_process_options
from ferry._cli.retention_options import add_maintenance_options, prune_every_ms, retention_from
from ferry._cli.roles import register_role
from ferry._jobs.policy import Caps
from ferry._lifecycle import Role
from ferry._maintenance import Maintenance
from ferry._metrics import MaintenanceMetrics, WorkerMetrics
from ferry._names import check_name
from ferry._operations.envelope import Outcome
from ferry._worker import JobWorker, job_worker
from ferry.drivers.protocol import JobDriver
from ferry.errors import FerryError


def worker_options(parser: argparse.ArgumentParser) -> None:
    add_process_options(parser, declares="jobs")
    env = os.environ.get
    parser.add_argument(
        "--concurrency", type=whole("--concurrency", 1, 10_000), default=env("CONCURRENCY", "10")
    )
    parser.add_argument("--queues", default=env("QUEUES"), help="comma-separated")
    parser.add_argument(
        "--drain-seconds",
        type=seconds("--drain-seconds", positive=False),
        default=env("DRAIN_SECONDS", "30"),
    )
    parser.add_argument(
        "--lease-seconds", type=seconds("--lease-seconds"), default=env("LEASE_SECONDS", "30")
    )
    parser.add_argument(
        "--tenant-cap",
        type=whole("--tenant-cap", 1, INT32_MAX),
        default=env("TENANT_CAP") or None,
        help="most runs one tenant may have running across the fleet",
    )
    parser.add_argument(
        "--queue-caps",
        default=env("QUEUE_CAPS"),
        help="most runs running per queue across the fleet, e.g. default=20,mail=5",
    )
    parser.add_argument(
        "--total-cap",
        type=whole("--total-cap", 1, INT32_MAX),
        default=env("TOTAL_CAP") or None,
        help="most runs running across the fleet in total",
    )
    parser.add_argument(
        "--heartbeat-seconds",
        type=seconds("--heartbeat-seconds"),
        default=env("HEARTBEAT_SECONDS") or None,
        help="lease renewal interval (default: a third of --lease-seconds)",
    )
    parser.add_argument(
        "--maintenance",
        action="store_true",
        default=env("MAINTENANCE", "").lower() in ("1", "true", "yes"),
        help="also prune by the retention options, in one process of the fleet "
        "(for a deployment without a scheduler; $MAINTENANCE)",
    )
    add_maintenance_options(parser)


def queues_from(text: str | None) -> list[str] | None:
    """``--queues a,b`` (or ``QUEUES``) as queue names; unset or empty: every queue."""
    if not text:
        return None
    return [check_name(queue, what="--queues item") for queue in text.split(",")]


def caps_from(args: argparse.Namespace) -> Caps | None:
    """The fleet caps the flags (or ``TENANT_CAP``, ``QUEUE_CAPS``, ``TOTAL_CAP``) name."""
    per_queue: dict[str, int] = {}
    for item in filter(None, (args.queue_caps or "").split(",")):
        queue, _, limit = item.partition("=")
        if not queue or not limit.isdigit():
            raise FerryError(
                "X_INVARIANT",
                f"--queue-caps item {item!r} is not queue=limit",
                "write it as --queue-caps default=20,mail=5",
            )
        name = check_name(queue.strip(), what="--queue-caps queue")
        per_queue[name] = whole(f"--queue-caps {name}", 1, INT32_MAX)(limit)
    if args.tenant_cap is None and args.total_cap is None and not per_queue:
        return None
    return Caps(per_tenant=args.tenant_cap, per_queue=per_queue, total=args.total_cap)


async def run_worker(args: argparse.Namespace) -> Outcome:
    api = load_app(args.app)
    heartbeat_ms = int(args.heartbeat_seconds * 1000) if args.heartbeat_seconds else None
    metrics = WorkerMetrics(CollectorRegistry())
    caps = caps_from(args)
    policy, every_ms = retention_from(args), prune_every_ms(args)
    workers: list[JobWorker] = []

    def build(driver: JobDriver) -> list[Role]:
        worker = job_worker(
            driver=driver,
            jobs=api.jobs.values(),
            queues=queues_from(args.queues),
            concurrency=args.concurrency,
            lease_ms=int(args.lease_seconds * 1000),
            heartbeat_interval_ms=heartbeat_ms,
            drain_seconds=args.drain_seconds,
            metrics=metrics,
            caps=caps,
        )
        workers.append(worker)
        if not args.maintenance:
            return [worker]
        maintenance = Maintenance(
            driver,
            holder=worker.worker_id,
            policy=policy,
            every_ms=every_ms,
            metrics=MaintenanceMetrics(metrics.registry),
        )
        return [worker, maintenance]

    await run_role(args, process="worker", build=build, registry=metrics.registry)
    return Outcome("worker", f"worker {workers[0].worker_id} stopped")


def register(subparsers: Any) -> None:
    worker = subparsers.add_parser("worker", help="claim and run jobs until SIGTERM")
    worker_options(worker)
    worker.set_defaults(handler=run_worker, command_path=["worker"])


register_role("worker", worker_options, run_worker)
