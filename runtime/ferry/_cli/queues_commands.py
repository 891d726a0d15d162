"""``ferry queues pause|resume <queue>``: stop and restart claims from one queue."""

from __future__ import annotations

import argparse
from typing import Any

import ferry._operations as operations
from ferry._cli.jobs_commands import bind_driver_command
from ferry._operations.envelope import Outcome
from ferry.drivers.protocol import JobDriver


def register(subparsers: Any) -> None:
    """Add ``ferry queues pause|resume``."""
    queues = subparsers.add_parser("queues", help="pause and resume queues")
    commands = queues.add_subparsers(dest="queues_command", required=True)
    pause = commands.add_parser("pause", help="stop claims from a queue (enqueue still works)")
    pause.add_argument("queue")
    pause.add_argument(
        "--create",
        action="store_true",
        help="pause it even though no run has been on it yet (refused otherwise: a typo)",
    )
    bind_driver_command(pause, ["queues", "pause"], pause_queue)
    resume = commands.add_parser("resume", help="let claims from a queue proceed again")
    resume.add_argument("queue")
    bind_driver_command(resume, ["queues", "resume"], resume_queue)


async def pause_queue(args: argparse.Namespace, driver: JobDriver) -> Outcome:
    """Stop claims from the queue."""
    done = await operations.set_queue_paused(driver, args.queue, paused=True, create=args.create)
    return Outcome("queues pause", done.summary, done.data)


async def resume_queue(args: argparse.Namespace, driver: JobDriver) -> Outcome:
    """Let claims from the queue proceed."""
    done = await operations.set_queue_paused(driver, args.queue, paused=False)
    return Outcome("queues resume", done.summary, done.data)
