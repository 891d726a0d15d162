"""``ferry tasks …``: list, show, run now, pause and resume the app's scheduled tasks."""

from __future__ import annotations

import argparse
from typing import Any

import ferry._operations as operations
from ferry._app import load_app
from ferry._cli.database import add_database_options, open_driver
from ferry._cli.numbers import whole
from ferry._cli.tables import fields, rendering, table
from ferry._jobs.facade import set_job_driver
from ferry._operations.envelope import Outcome
from ferry.tasks._declaration import MAX_OCCURRENCES, TaskHandle

_COLUMNS = ("name", "cron", "tz", "next", "last", "paused")


def register(subparsers: Any) -> None:
    tasks = subparsers.add_parser("tasks", help="list, inspect, pause and resume scheduled tasks")
    commands = tasks.add_subparsers(dest="tasks_command", required=True)
    listing = commands.add_parser("list", help="every task with its next and last fire")
    _task_options(listing)
    listing.set_defaults(handler=list_tasks, command_path=["tasks", "list"])
    show = commands.add_parser("show", help="one task, its schedule in words, its next fires")
    _task_options(show)
    show.add_argument("name")
    show.add_argument(
        "--count",
        type=whole("--count", 1, MAX_OCCURRENCES),
        default="5",
        help=f"how many next occurrences (5, at most {MAX_OCCURRENCES})",
    )
    show.set_defaults(handler=show_task, command_path=["tasks", "show"])
    run = commands.add_parser("run", help="fire a task's entries now (the dashboard's run now)")
    _task_options(run)
    run.add_argument("name")
    run.set_defaults(handler=run_task, command_path=["tasks", "run"])
    for action, handler in (("pause", pause_task), ("resume", resume_task)):
        command = commands.add_parser(action, help=f"{action} dispatching one task")
        _task_options(command)
        command.add_argument("name")
        command.set_defaults(handler=handler, command_path=["tasks", action])


def _task_options(parser: argparse.ArgumentParser) -> None:
    add_database_options(parser)
    parser.add_argument("--app", default=None, help="module[:api] with the tasks (or $FERRY_APP)")


async def list_tasks(args: argparse.Namespace) -> Outcome:
    rows = await _statuses(args, None, next_count=None)
    grid = table(None, _COLUMNS, [[_cell(row[column]) for column in _COLUMNS] for row in rows])
    return Outcome(" ".join(args.command_path), f"{len(rows)} task(s)", rows, text=rendering(grid))


async def show_task(args: argparse.Namespace) -> Outcome:
    (row,) = await _statuses(args, args.name, next_count=args.count)
    shown = fields(
        f"task {row['name']}",
        [(key, _cell(value)) for key, value in row.items() if key != "nextOccurrences"],
    )
    upcoming = table(
        "next occurrences", ["at", "ms"], [(o["at"], o["ms"]) for o in row["nextOccurrences"]]
    )
    return Outcome(
        " ".join(args.command_path), f"task {row['name']}", row, text=rendering(shown, upcoming)
    )


async def pause_task(args: argparse.Namespace) -> Outcome:
    return await _set_paused(args, paused=True)


async def resume_task(args: argparse.Namespace) -> Outcome:
    return await _set_paused(args, paused=False)


async def run_task(args: argparse.Namespace) -> Outcome:
    """Fire a task's entries now, as the dashboard's and MCP's run-now do (one operation)."""
    tasks = _tasks(args)
    operations.find_task(tasks, args.name)  # refused before any connection
    driver = await open_driver(args)
    previous = set_job_driver(driver)
    try:
        done = await operations.run_task_now(tasks, args.name)
    finally:
        set_job_driver(previous)
        await driver.close()
    return Outcome(" ".join(args.command_path), done.summary, done.data)


async def _set_paused(args: argparse.Namespace, *, paused: bool) -> Outcome:
    tasks = _tasks(args)
    operations.find_task(tasks, args.name)  # refused before any connection
    driver = await open_driver(args)
    try:
        done = await operations.set_task_paused(
            tasks, driver, args.name, paused=paused, now_ms=driver.clock.now_ms()
        )
    finally:
        await driver.close()
    return Outcome(" ".join(args.command_path), done.summary, done.data)


async def _statuses(
    args: argparse.Namespace, name: str | None, *, next_count: int | None
) -> list[dict[str, Any]]:
    """The status rows of every task, or of the one named."""
    tasks = _tasks(args)
    if name is not None:
        tasks = [operations.find_task(tasks, name)]
    driver = await open_driver(args)
    try:
        return await operations.task_statuses(
            tasks, driver, now_ms=driver.clock.now_ms(), next_count=next_count
        )
    finally:
        await driver.close()


def _tasks(args: argparse.Namespace) -> list[TaskHandle]:
    return list(load_app(args.app).tasks.values())


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return str(value)
