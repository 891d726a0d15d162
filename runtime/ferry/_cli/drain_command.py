"""``ferry jobs drain --from URL --to URL``: move queued (and dead) runs to another store.

The protocol of a move and why a kill at any point loses nothing is ``ferry._move``'s; this
module resolves the two URLs, refuses what must not start (a store that lives in this
process, the same store twice), and reports each batch.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from ferry._cli.database import configured_dsn
from ferry._cli.numbers import whole
from ferry._cli.tables import rendering, table
from ferry._identity import new_worker_id
from ferry._move import COLLISIONS_LISTED, MoveReport, move_runs
from ferry._names import check_name
from ferry._operations.envelope import Outcome, camel_keys
from ferry.drivers import job_driver_from_url
from ferry.drivers._url import connection_refusal, connection_refusals
from ferry.drivers.capabilities import INTROSPECT, need
from ferry.drivers.protocol import JobDriver, JobState, RunFilter
from ferry.errors import FerryError

DEFAULT_BATCH = 500
LEFT_STATES: tuple[JobState, ...] = ("queued", "dead", "moving", "running", "sleeping")
"""What the report counts on the source afterwards: what a drain moves, what it left
reserved, and what it never moves (in flight)."""


def register(commands: Any) -> None:
    """Add ``ferry jobs drain`` to the ``jobs`` group."""
    drain = commands.add_parser(
        "drain", help="move queued (and dead) runs to another durable store"
    )
    drain.add_argument(
        "--from",
        dest="database_url",
        default=None,
        help="the store to move runs out of (default: $DATABASE_URL)",
    )
    drain.add_argument("--to", required=True, help="the store to move them into")
    drain.add_argument("--schema", default=os.environ.get("FERRY_SCHEMA", "ferry"))
    drain.add_argument("--from-schema", default=None, help="default: --schema")
    drain.add_argument("--to-schema", default=None, help="default: --schema")
    drain.add_argument("--queue", action="append", default=None, help="only this queue (repeat)")
    drain.add_argument("--include-dead", action="store_true", help="move dead runs too")
    drain.add_argument(
        "--batch",
        type=whole("--batch", 1, 10_000),
        default=str(DEFAULT_BATCH),
        help=f"runs per batch (default {DEFAULT_BATCH}, at most 10000)",
    )
    drain.set_defaults(handler=drain_queue, command_path=["jobs", "drain"])


async def drain_queue(args: argparse.Namespace) -> Outcome:
    """Move the runs, batch by batch, and report every batch."""
    source_url = configured_dsn(args)
    if not source_url:
        raise FerryError(
            "X_DRIVER_UNSET",
            "`ferry jobs drain` needs a store to move runs out of, and neither --from nor "
            "DATABASE_URL is set",
            "pass --from postgresql://user:password@host:5432/database",
        )
    queues = [check_name(q, what="queue") for q in args.queue] if args.queue else None
    source = job_driver_from_url(source_url, schema=args.from_schema or args.schema)
    target = job_driver_from_url(args.to, schema=args.to_schema or args.schema)
    try:
        source_at = _durable(source, "--from")
        target_at = _durable(target, "--to")
        if source_at == target_at:
            raise FerryError(
                "X_DRAIN_SAME_STORE",
                f"--from and --to name one store ({source_at}): a drain removes each run "
                "from the source once the target holds it, so it would delete the only copy",
                "name the new database as --to (or another schema: --to-schema NAME)",
            )
        # Reached (connected, migrated) before anything is reserved: an unreachable target
        # must not leave the source's runs reserved for a move that cannot start.
        await _reach(target, args.to)
        await _reach(source, source_url)
        drain_id = f"drain:{new_worker_id()}"
        report = MoveReport()
        try:
            await move_runs(
                source,
                target,
                drain_id=drain_id,
                batch=args.batch,
                queues=queues,
                include_dead=args.include_dead,
                report=report,
            )
        except FerryError as stopped:
            return _stopped(args, source_at, target_at, drain_id, report, stopped)
        except Exception as error:
            refusal = connection_refusal(error, None)
            if refusal is None:
                raise
            return _stopped(args, source_at, target_at, drain_id, report, refusal)
        left = await _left(source, queues)
        return _outcome(args, source_at, target_at, drain_id, report, left)
    finally:
        await target.close()
        await source.close()


def _durable(driver: JobDriver, option: str) -> str:
    """The driver's location, or ``X_DRAIN_NOT_DURABLE``: the lesson of ``--to memory``."""
    if driver.location is not None:
        return driver.location
    if option == "--to":
        why = (
            "every run moved into it would be removed from the source and lost when this "
            "command exits"
        )
    else:
        why = "it starts empty in this command, so there is nothing there to move"
    raise FerryError(
        "X_DRAIN_NOT_DURABLE",
        f"{option} names a {driver.name} store, which lives inside this command's own "
        f"process: {why}",
        f"name a durable store as {option}, e.g. postgresql://user:password@host:5432/database",
    )


async def _reach(driver: JobDriver, url: str) -> None:
    """Connect (and migrate) now: the first call on a driver opens it; a failure names
    which of the two stores it was."""
    with connection_refusals(url):
        await need(driver, INTROSPECT, by="ferry jobs drain").list_runs(RunFilter(limit=1))


async def _left(source: JobDriver, queues: Sequence[str] | None) -> dict[JobState, int]:
    """Runs of the drained queues still on the source, per state in ``LEFT_STATES``."""
    left = dict.fromkeys(LEFT_STATES, 0)
    for stats in await source.stats():
        if queues is None or stats.queue in queues:
            for state in LEFT_STATES:
                left[state] += stats.counts.get(state, 0)
    return left


def _data(
    args: argparse.Namespace,
    source_at: str,
    target_at: str,
    drain_id: str,
    report: MoveReport,
    left: dict[JobState, int] | None,
) -> dict[str, Any]:
    data = {
        "drain_id": drain_id,
        "from": source_at,
        "to": target_at,
        "queues": args.queue,
        "include_dead": args.include_dead,
        "batch": args.batch,
        "batches": [batch.to_json() for batch in report.batches],
        "total": report.total().to_json(),
        "collisions": [
            {
                "source_id": c.source_id,
                "idempotency_key": c.idempotency_key,
                "target_id": c.target_id,
            }
            for c in report.collisions[:COLLISIONS_LISTED]
        ],
        "released": report.released,
        "stopped": report.stopped,
        "left_on_source": left,
    }
    return camel_keys(data)  # type: ignore[no-any-return]


def _outcome(
    args: argparse.Namespace,
    source_at: str,
    target_at: str,
    drain_id: str,
    report: MoveReport,
    left: dict[JobState, int],
) -> Outcome:
    total = report.total()
    summary = (
        f"moved {total.removed:,} run(s) from {source_at} to {target_at} in "
        f"{len(report.batches)} batch(es) of up to {args.batch}"
    )
    findings = []
    if report.collisions:
        listed = ", ".join(
            f"{c.source_id} (key {c.idempotency_key!r}: run {c.target_id} there)"
            for c in report.collisions[:5]
        )
        stopped = (
            "; the drain stopped at a batch in which every run collided (is --to this "
            "store under another name?)"
            if report.stopped == "collisions"
            else ""
        )
        findings.append(
            FerryError(
                "X_DRAIN_KEY_COLLISION",
                f"{len(report.collisions)} run(s) were not moved ({total.removed:,} others "
                f"were): the target gives their idempotency key to a different run — {listed}"
                + (" …" if len(report.collisions) > 5 else "")
                + stopped,
                "they are back on the source as they were; compare each pair with `ferry jobs "
                "show` on both stores, cancel the one you do not want, then drain again",
            ).to_dict()
        )
    if report.stopped == "contended":
        findings.append(
            FerryError(
                "X_DRAIN_CONTENDED",
                f"another drain to {target_at} is running and keeps taking over the runs this "
                "one holds, so this one stopped",
                "let the other drain finish, then run this one again (it finishes what is left)",
            ).to_dict()
        )
    still_moving = (
        [
            f"{left['moving']:,} run(s) are still reserved (moving) on the source: another "
            "drain holds them, or a session of an interrupted one still locks them; run the "
            "drain again to finish them"
        ]
        if left["moving"]
        else []
    )
    text = rendering(
        summary,
        table(
            None,
            ["", "reserved", "imported", "present", "collisions", "removed", "ms"],
            [
                (
                    "total",
                    total.reserved,
                    total.imported,
                    total.present,
                    total.collisions,
                    total.removed,
                    total.ms,
                )
            ],
        ),
        "left on the source: " + ", ".join(f"{n:,} {state}" for state, n in left.items()),
        *still_moving,
    )
    return Outcome(
        "jobs drain",
        summary,
        _data(args, source_at, target_at, drain_id, report, left),
        findings=findings,
        ok=not findings,
        text=text,
    )


def _stopped(
    args: argparse.Namespace,
    source_at: str,
    target_at: str,
    drain_id: str,
    report: MoveReport,
    error: FerryError,
) -> Outcome:
    """A drain cut short by a store that failed: the refusal, what moved before it, and
    that a rerun finishes (it takes over what this drain had reserved)."""
    total = report.total()
    stopped = FerryError(
        error.code,
        f"{error.message} — the drain stopped after {len(report.batches)} batch(es), "
        f"{total.removed:,} run(s) moved",
        f"{error.fix}; then run the drain again: it finishes what this one had reserved",
    )
    return Outcome(
        "jobs drain",
        stopped.message,
        _data(args, source_at, target_at, drain_id, report, None),
        findings=[stopped.to_dict()],
        ok=False,
    )
