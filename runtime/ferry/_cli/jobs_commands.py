"""``ferry jobs …``: the run-level operator commands, all read through ``JobIntrospection``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import ferry._operations as operations
from ferry._app import load_app
from ferry._bounds import INT32_MAX, INT32_MIN
from ferry._cli import drain_command
from ferry._cli.database import add_database_options, open_driver
from ferry._cli.numbers import whole
from ferry._cli.tables import (
    code_style,
    fields,
    render_parts,
    rendering,
    state_style,
    table,
)
from ferry._jobs.facade import set_job_driver
from ferry._operations import bulk
from ferry._operations.envelope import Outcome, Terminal
from ferry._operations.filters import FILTER_WORDS, VIEWS, instant
from ferry._operations.preview import DEFAULT_PREVIEW_CHARS, json_text, preview_json
from ferry._operations.runs import WAITING_STATES
from ferry._tracecontext import trace_id_of
from ferry.drivers.protocol import JOB_STATES, JobDriver, RunDetail
from ferry.errors import FerryError

Command = Callable[[argparse.Namespace, JobDriver], Awaitable[Outcome]]


def register(subparsers: Any) -> None:
    """Add ``ferry jobs ls|show|retry|cancel|enqueue|stats|drain``."""
    jobs = subparsers.add_parser("jobs", help="inspect and act on runs")
    commands = jobs.add_subparsers(dest="jobs_command", required=True)

    ls = commands.add_parser("ls", help="list and search runs, newest first (paged by id)")
    add_filter_options(ls)
    ls.add_argument("--limit", default=None, help="page size (default 50, at most 500)")
    ls.add_argument("--before", default=None, help="page on: runs older than this id")
    bind_driver_command(ls, ["jobs", "ls"], list_runs)

    show = commands.add_parser("show", help="one run: input, steps, error, lease")
    show.add_argument("id")
    show.add_argument(
        "--full",
        action="store_true",
        help="print the input, result and step results whole (default: the first "
        f"{DEFAULT_PREVIEW_CHARS:,} characters of each)",
    )
    bind_driver_command(show, ["jobs", "show"], show_run)

    retry = commands.add_parser("retry", help="put a dead or cancelled run back to queued")
    retry.add_argument("id")
    bind_driver_command(retry, ["jobs", "retry"], retry_run)

    cancel = commands.add_parser("cancel", help="cancel a queued, sleeping or running run")
    cancel.add_argument("id")
    bind_driver_command(cancel, ["jobs", "cancel"], cancel_run)

    enqueue = commands.add_parser("enqueue", help="queue one run of a declared job")
    enqueue.add_argument("name", help="the job's name")
    enqueue.add_argument("--input", required=True, help="the job's input as a JSON object")
    enqueue.add_argument("--delay", default=None, help='due after this long, e.g. "10m"')
    enqueue.add_argument(
        "--priority",
        type=whole("--priority", INT32_MIN, INT32_MAX),
        default=None,
        help="this run's priority (default: the job's)",
    )
    enqueue.add_argument("--queue", default=None, help="this run's queue (default: the job's)")
    enqueue.add_argument("--app", default=None, help="module[:api] with the jobs (or $FERRY_APP)")
    bind_driver_command(enqueue, ["jobs", "enqueue"], enqueue_run)

    stats = commands.add_parser("stats", help="per queue: depth, states, throughput")
    stats.add_argument("--window", default="5m", help="throughput window, 1ms to 366d (default 5m)")
    bind_driver_command(stats, ["jobs", "stats"], queue_stats)

    many = commands.add_parser(
        "bulk", help="retry, cancel or delete every run a filter matches (previewed first)"
    )
    many.add_argument("action", help=f"one of {', '.join(bulk.BULK_ACTIONS)}")
    add_filter_options(many)
    many.add_argument(
        "--dry-run", action="store_true", help="show how many runs it would change, and stop"
    )
    many.add_argument("--yes", action="store_true", help="do it without asking")
    many.add_argument(
        "--selection",
        default=None,
        help="do it only if the filter still selects exactly the runs a --dry-run showed",
    )
    bind_driver_command(many, ["jobs", "bulk"], bulk_runs)

    drain_command.register(commands)


def add_filter_options(parser: argparse.ArgumentParser) -> None:
    """The filter words every run listing and bulk action takes."""
    parser.add_argument("--queue", default=None)
    parser.add_argument("--job", default=None, help="the job name")
    parser.add_argument("--state", default=None, help=f"one of {', '.join(JOB_STATES)}")
    parser.add_argument("--view", default=None, help=f"one of {', '.join(VIEWS)}")
    parser.add_argument("--tenant", default=None)
    parser.add_argument("--since", default=None, help='created after: "1h" ago or an ISO instant')
    parser.add_argument("--until", default=None, help='created before: "10m" ago or an ISO instant')
    parser.add_argument("--key", default=None, help="idempotency keys starting with this")
    parser.add_argument(
        "--error-code", dest="error_code", default=None, help="last error with this X_* code"
    )
    parser.add_argument(
        "--error-text",
        dest="error_text",
        default=None,
        help="last error message containing this (ASCII letters in either case)",
    )
    parser.add_argument(
        "--input", default=None, help='inputs containing this JSON, e.g. \'{"org_id": "42"}\''
    )


def bind_driver_command(parser: argparse.ArgumentParser, path: list[str], command: Command) -> None:
    """Give a command the database options and a handler that opens and closes the driver."""
    add_database_options(parser)

    async def handler(args: argparse.Namespace) -> Outcome:
        driver = await open_driver(args)
        try:
            return await command(args, driver)
        finally:
            await driver.close()

    parser.set_defaults(handler=handler, command_path=path)


def filter_words(args: argparse.Namespace) -> dict[str, str | None]:
    """The filter words the command line was given (the paging ones where the command has
    them)."""
    return {word: getattr(args, word, None) for word in FILTER_WORDS}


async def list_runs(args: argparse.Namespace, driver: JobDriver) -> Outcome:
    """One page of runs under the filters, newest first."""
    page = await operations.list_runs(driver, filter_words(args))
    grid = table(
        None,
        ["id", "job", "queue", "state", "attempts", "tenant", "created", "run at", "last error"],
        [
            (
                r.id,
                r.name,
                r.queue,
                r.state,
                f"{r.attempts}/{r.max_attempts}",
                r.tenant,
                instant(r.created_at_ms),
                instant(r.run_at_ms) if r.state in WAITING_STATES else None,
                r.last_error.code if r.last_error else None,
            )
            for r in page.runs
        ],
        styles={"state": state_style, "last error": code_style},
    )
    older = [f"older: ferry jobs ls --before {page.next_before_id}"] if page.next_before_id else []
    return Outcome("jobs ls", page.summary, page.to_json(), text=rendering(grid, *older))


async def show_run(args: argparse.Namespace, driver: JobDriver) -> Outcome:
    """Everything known about one run."""
    run = await operations.show_run(driver, args.id)
    return Outcome(
        "jobs show",
        operations.run_headline(run),
        operations.run_json(run),
        text=lambda terminal: _detail_text(run, full=args.full, terminal=terminal),
    )


def _detail_text(run: RunDetail, *, full: bool, terminal: Terminal) -> str:
    """The run as a person reads it, in time linear in its size: each stored value is a
    bounded preview, or, with ``--full``, printed whole below the tables."""
    s = run.summary
    more = f"; `ferry jobs show {s.id} --full` prints everything"
    whole: list[tuple[str, Any]] = []

    def shown(label: str, value: Any) -> str:
        if full:
            whole.append((label, value))
            return "(printed whole below)"
        return preview_json(value).render(more)

    error = f"{s.last_error.code}: {s.last_error.message}" if s.last_error else None
    progress = f"{run.progress.current}/{run.progress.total}" if run.progress else None
    overview = fields(
        f"run {s.id}",
        [
            ("job", s.name),
            ("queue", s.queue),
            ("state", s.state),
            ("waiting", operations.waiting_for(run)),
            ("attempts", f"{s.attempts}/{s.max_attempts}"),
            ("input", shown("input", run.payload)),
            ("result", shown("result", run.result) if run.result is not None else None),
            ("progress", progress),
            ("last error", error),
            ("parent", run.parent_id),
            (
                "children",
                f"{run.children_count:,} ({run.children_pending:,} not ended)"
                if run.children_count
                else None,
            ),
            ("tenant", s.tenant),
            ("actor", run.actor),
            ("idempotency key", run.idempotency_key),
            ("concurrency key", run.concurrency_key),
            ("rate key", run.rate_key),
            ("lease holder", run.locked_by),
            ("lease expires", instant(run.lease_expires_at_ms) if run.locked_by else None),
            (
                "cancel requested",
                instant(run.cancel_requested_at_ms) if run.cancel_requested_at_ms else None,
            ),
            ("created", instant(s.created_at_ms)),
            ("run at", instant(s.run_at_ms)),
            ("updated", instant(s.updated_at_ms)),
            ("finished", instant(run.finished_at_ms) if run.finished_at_ms else None),
            ("trace", trace_id_of(run.traceparent)),
        ],
    )
    steps = table(
        "steps",
        ["step", "kind", "started", "took", "result"],
        [
            (
                step.name,
                step.kind,
                instant(step.started_at_ms),
                f"{step.finished_at_ms - step.started_at_ms} ms",
                shown(f"step {step.name!r} result", step.result)
                if step.kind == "run"
                else f"wakes {instant(step.wake_at_ms)}",
            )
            for step in run.steps
        ],
    )
    shown_children = (
        [
            table(
                f"children (the first {len(run.children):,} of {run.children_count:,})"
                if run.children_count > len(run.children)
                else "children",
                ["id", "job", "state", "attempts", "last error"],
                [
                    (
                        child.id,
                        child.name,
                        child.state,
                        f"{child.attempts}/{child.max_attempts}",
                        child.last_error.code if child.last_error else "",
                    )
                    for child in run.children
                ],
            )
        ]
        if run.children
        else []
    )
    wholes = [f"{label}:\n{json_text(value)}" for label, value in whole]
    failures = [
        f"failed attempt {f.attempt if f.attempt is not None else '(cut)'}"
        f"{f' · {f.code}' if f.code else ''}{f' · {instant(f.at_ms)}' if f.at_ms else ''}:\n"
        f"{f.traceback.rstrip()}"
        for f in run.failures
    ]
    return render_parts([overview, steps, *shown_children, *failures, *wholes], terminal)


async def enqueue_run(args: argparse.Namespace, driver: JobDriver) -> Outcome:
    """Queue one run of a declared job, through its handle, on the command's store."""
    jobs = load_app(args.app).jobs
    operations.find_job(jobs, args.name)  # refused before anything is written
    value = operations.input_of(args.input)
    previous = set_job_driver(driver)
    try:
        done = await operations.enqueue_job(
            jobs, args.name, value, delay=args.delay, priority=args.priority, queue=args.queue
        )
    finally:
        set_job_driver(previous)
    return Outcome("jobs enqueue", done.summary, done.data)


async def retry_run(args: argparse.Namespace, driver: JobDriver) -> Outcome:
    """Put a dead or cancelled run back to queued."""
    done = await operations.retry_run(driver, args.id)
    return Outcome("jobs retry", done.summary, done.data)


async def cancel_run(args: argparse.Namespace, driver: JobDriver) -> Outcome:
    """Cancel a run (a running one: ask its worker to)."""
    done = await operations.cancel_run(driver, args.id)
    return Outcome("jobs cancel", done.summary, done.data)


async def queue_stats(args: argparse.Namespace, driver: JobDriver) -> Outcome:
    """Depth, state counts and throughput per queue."""
    window_ms = operations.stats_window_ms(args.window)
    queues = await operations.queue_stats(driver, window_ms)
    grid = table(
        None,
        ["queue", "paused", "depth", *JOB_STATES, f"done/{args.window}", "per min"],
        [
            (
                q.queue,
                "yes" if q.paused else "",
                q.depth,
                *(q.counts[state] for state in JOB_STATES),
                q.completed_in_window,
                f"{q.per_minute:.1f}",
            )
            for q in queues
        ],
    )
    return Outcome(
        "jobs stats",
        operations.stats_summary(queues),
        operations.stats_json(window_ms, queues),
        text=rendering(grid),
    )


async def bulk_runs(args: argparse.Namespace, driver: JobDriver) -> Outcome:
    """Preview a bulk action; unless ``--dry-run``, confirm it (``--yes``, ``--selection``
    or a question at a terminal) and act on exactly the previewed runs."""
    action = bulk.bulk_action(args.action)
    command = f"jobs bulk {action}"
    words = filter_words(args)
    selection = await bulk.preview(driver, action, words)
    if args.dry_run:
        shown = table(None, ["runs", "selection", "first ids"], [
            (len(selection.ids), selection.token, ", ".join(selection.ids[:10]) or "-")
        ])  # fmt: skip
        return Outcome(command, selection.summary, selection.to_json(), text=rendering(shown))
    token = args.selection or selection.token
    asked = args.yes or args.selection or not selection.ids  # nothing to confirm: 0 runs
    if not asked and not _confirmed(selection):
        raise FerryError(
            "X_INVARIANT",
            f"a bulk {action} of {len(selection.ids)} run(s) was not confirmed",
            "answer y at the question, pass --yes, or pass --selection <token> from a "
            "--dry-run (the only ways outside a terminal)",
        )
    done = await bulk.apply(driver, action, words, token)
    return Outcome(command, done.summary, done.data)


def _confirmed(selection: bulk.Selection) -> bool:
    """Ask at the terminal (stdin and stderr both one): the question on stderr, so stdout
    carries only the result."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    sys.stderr.write(f"{selection.summary}. Go ahead? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")
