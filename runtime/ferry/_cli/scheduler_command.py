"""``ferry scheduler`` (``ROLE=scheduler``): dispatch the app's tasks while leading."""

from __future__ import annotations

import argparse
import logging
import os
from typing import Any

from prometheus_client import CollectorRegistry

from ferry._app import load_app
from ferry._cli.lifecycle import run_role
from ferry._cli.numbers import seconds
from ferry._cli.process_options import add_process_options
from ferry._cli.retention_options import add_maintenance_options, prune_every_ms, retention_from
from ferry._cli.roles import register_role
from ferry._lifecycle import Role
from ferry._maintenance import Maintenance
from ferry._metrics import MaintenanceMetrics, SchedulerMetrics
from ferry._metrics.queue_catalog import QueueSampler
from ferry._operations.envelope import Outcome
from ferry._scheduler import DEFAULT_LEADER_TTL_MS, DEFAULT_TICK_MS, Scheduler
from ferry.drivers.protocol import JobDriver

logger = logging.getLogger("ferry.scheduler")

DEFAULT_STATS_SECONDS = 5.0
"""How often the leader samples the queue gauges: the backlog an autoscaler reads is at
most this old (a worker samples every 15 s; one leader per fleet can afford more)."""


def scheduler_options(parser: argparse.ArgumentParser) -> None:
    add_process_options(parser, declares="tasks")
    env = os.environ.get
    parser.add_argument(
        "--tick-seconds",
        type=seconds("--tick-seconds"),
        default=env("TICK_SECONDS", str(DEFAULT_TICK_MS / 1000)),
        help="how often a round renews the lease and dispatches (default 1)",
    )
    parser.add_argument(
        "--lease-seconds",
        type=seconds("--lease-seconds"),
        default=env("LEASE_SECONDS", str(DEFAULT_LEADER_TTL_MS / 1000)),
        help="leader lease TTL: a standby takes over this long after the leader stops",
    )
    parser.add_argument(
        "--stats-seconds",
        type=float,
        default=float(env("STATS_SECONDS", DEFAULT_STATS_SECONDS)),
        help="how often the leader samples the queue gauges, job_queue_backlog among them "
        f"($STATS_SECONDS, default {DEFAULT_STATS_SECONDS:g})",
    )
    add_maintenance_options(parser)


async def run_scheduler(args: argparse.Namespace) -> Outcome:
    api = load_app(args.app)
    metrics = SchedulerMetrics(CollectorRegistry())
    metrics.declare_jobs((name, handle.queue) for name, handle in api.jobs.items())
    policy, every_ms = retention_from(args), prune_every_ms(args)
    schedulers: list[Scheduler] = []

    def build(driver: JobDriver) -> list[Role]:
        if not api.tasks:
            # Still the fleet's leader: it prunes and measures the queues (what the
            # Kubernetes operator runs a namespace's scheduler for when only an autoscaled
            # DurableJob needs one), but an app that forgot to hand its tasks over should
            # hear it.
            logger.warning(
                "jobs.scheduler.no-tasks",
                extra={"app": args.app or os.environ.get("FERRY_APP"), "dispatches": "nothing"},
            )
        scheduler = Scheduler(
            driver=driver,
            tasks=api.tasks.values(),
            tick_ms=round(args.tick_seconds * 1000),
            lease_ms=round(args.lease_seconds * 1000),
            metrics=metrics,
        )
        schedulers.append(scheduler)
        # Maintenance rides on leadership: the leader prunes, the standby does not.
        maintenance = Maintenance(
            driver,
            holder=scheduler.holder,
            policy=policy,
            every_ms=every_ms,
            leading=lambda: scheduler.leader.held,
            metrics=MaintenanceMetrics(metrics.registry),
        )
        # So does measuring the queues: the leader samples, the standby reports none.
        sampler = QueueSampler(
            driver,
            metrics.queues,
            every_ms=round(args.stats_seconds * 1000),
            measuring=lambda: scheduler.leader.held,
        )
        return [scheduler, maintenance, sampler]

    # The scheduler binds the metrics port only: liveness is /livez, and nothing routes
    # request traffic to a scheduler.
    await run_role(args, process="scheduler", build=build, registry=metrics.registry)
    return Outcome("scheduler", f"scheduler {schedulers[0].holder} stopped")


def register(subparsers: Any) -> None:
    scheduler = subparsers.add_parser(
        "scheduler", help="dispatch the app's tasks while holding the leader lease"
    )
    scheduler_options(scheduler)
    scheduler.set_defaults(handler=run_scheduler, command_path=["scheduler"])


register_role("scheduler", scheduler_options, run_scheduler)
