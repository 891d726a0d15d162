"""``ferry queues pause|resume <queue>``: stop and restart claims from one queue."""

from __future__ import annotations

import argparse
from typing import Any

from ferry._cli.envelope import Outcome
from ferry._cli.jobs_commands import bind_driver_command
from ferry.drivers._postgres import PostgresJobDriver


def register(subparsers: Any) -> None:
    """Add ``ferry queues pause|resume``."""
    queues = subparsers.add_parser("queues", help="pause and resume queues")
    commands = queues.add_subparsers(dest="queues_command", required=True)
    pause = commands.add_parser("pause", help="stop claims from a queue (enqueue still works)")
    pause.add_argument("queue")
    bind_driver_command(pause, ["queues", "pause"], pause_queue)
    resume = commands.add_parser("resume", help="let claims from a queue proceed again")
    resume.add_argument("queue")
    bind_driver_command(resume, ["queues", "resume"], resume_queue)


async def pause_queue(args: argparse.Namespace, driver: PostgresJobDriver) -> Outcome:
    """Stop claims from the queue."""
    await driver.introspect.pause_queue(args.queue)
    return Outcome(
        "queues pause",
        f'queue "{args.queue}" is paused: its runs stay queued until it is resumed',
        {"queue": args.queue, "paused": True},
    )


async def resume_queue(args: argparse.Namespace, driver: PostgresJobDriver) -> Outcome:
    """Let claims from the queue proceed."""
    await driver.introspect.resume_queue(args.queue)
    return Outcome(
        "queues resume", f'queue "{args.queue}" is resumed', {"queue": args.queue, "paused": False}
    )
