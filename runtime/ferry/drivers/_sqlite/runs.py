"""The run statements' Python side: the lease fence, the settle and fan-in rules, enqueue
batches.

Each function here runs on the writer's thread inside one ``BEGIN IMMEDIATE`` transaction
(``Database.transaction``), so what it reads cannot change before it writes: the fence and
the settle rules are ``ferry.drivers.settle``'s own functions applied to the row, not a
copy of them in SQL; so are the fan-in rules (``ferry.drivers.fan_in``), in the
transaction of every change of a child's or a waiting parent's state.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ferry.drivers._columns import (
    json_text,
    progress_columns,
    run_of,
    run_pk,
    stored_columns,
)
from ferry.drivers._sqlite.database import played
from ferry.drivers._stores.enqueue import EnqueueBatch
from ferry.drivers._stores.moves import Moved, StateChange
from ferry.drivers._stores.rates import window_of
from ferry.drivers._stores.records import put_parameters
from ferry.drivers._stores.statements import Plan
from ferry.drivers.fan_in import count_change, wakes_parent
from ferry.drivers.protocol import (
    SUPERSEDED_KEY_BYTES,
    AckOptions,
    ClaimedJob,
    ClaimOptions,
    EnqueueRequest,
    EnqueueResult,
    NackOptions,
    RecordWrite,
    Renewal,
    RenewalAnswer,
    Settle,
)
from ferry.drivers.rates import RateWindow, take
from ferry.drivers.settle import SettleFields, first_of_each, holds_lease, settle_run

Queries = Mapping[str, str]


def held(
    c: sqlite3.Connection, queries: Queries, job_id: str, worker_id: str, now_ms: int
) -> sqlite3.Row | None:
    """Run ``job_id``'s row if ``worker_id`` holds its lease at ``now_ms`` (the fence)."""
    pk = run_pk(job_id)
    row: sqlite3.Row | None = (
        c.execute(queries["run_held"], {"id": pk}).fetchone() if pk is not None else None
    )
    if row is None or not holds_lease(
        state=row["state"],
        locked_by=row["locked_by"],
        lease_expires_at_ms=row["lease_expires_at_ms"],
        worker_id=worker_id,
        now_ms=now_ms,
    ):
        return None
    return row


def claim(
    c: sqlite3.Connection, queries: Queries, options: ClaimOptions, now_ms: int
) -> list[ClaimedJob]:
    """Lease due runs (``claim``), or with ``options.limits`` also take each keyed run's
    slot (``worker_claim`` then ``slot_take``, in the caller's transaction)."""
    limits = options.limits
    until = now_ms + options.lease_ms
    parameters = {
        "worker_id": options.worker_id,
        "now": now_ms,
        "lease_until": until,
        "limit": max(options.limit, 0),
        "queues": None if options.queues is None else json.dumps(list(options.queues)),
        "names": None if options.names is None else json.dumps(list(options.names)),
        "limits": json.dumps(dict(limits)),
    }
    rows = c.execute(queries["worker_claim" if limits else "claim"], parameters).fetchall()
    rows.sort(key=lambda r: (-r["priority"], r["run_at_ms"], r["pk"]))  # RETURNING is unordered
    deferred = _rate_limited(c, queries, rows, options.rates, now_ms) if options.rates else {}
    claimed = []
    for row in rows:
        if row["id"] in deferred:
            until = deferred[row["id"]]
            claimed.append(
                run_of(
                    ClaimedJob,
                    row,
                    rate_deferred_until_ms=until,
                    run_at_ms=until,
                    attempt=row["attempts"] - 1,
                )
            )
            continue
        keyed = row["name"] in limits and row["concurrency_key"] is not None
        if keyed:
            c.execute(
                queries["slot_take"],
                {"key": row["concurrency_key"], "holder": row["id"], "expires_at_ms": until},
            )
        claimed.append(run_of(ClaimedJob, row, slot_held=keyed))
    return claimed


class CountedMoves:
    """``RunMoves`` on SQLite: the fan-in rules applied in the transaction of each change
    (``counted``), and this process told once it committed (``told``: its idle workers, its
    result waiters; other processes learn both through their watchers)."""

    def __init__(self, told: Callable[[Moved], None]) -> None:
        self._told = told

    def changed(self, changes: Sequence[StateChange], now_ms: int, moved: Moved) -> Plan[None]:
        return counted(changes, now_ms, moved)

    def committed(self, moved: Moved) -> None:
        self._told(moved)


def counted(changes: Sequence[StateChange], now_ms: int, moved: Moved) -> Plan[None]:
    """Note each run of ``changes`` that ended in ``moved``, and count each change in the
    run's parent (``ferry.drivers.fan_in``)."""
    for change in changes:
        if change.ended:
            moved.ended.append(str(change.pk))
        delta = count_change(change.before, change.after)
        if change.parent_id is not None and delta:
            yield from parent_counted(change.parent_id, delta, now_ms, moved)


def parent_counted(parent_id: int, change: int, now_ms: int, moved: Moved) -> Plan[None]:
    """Change run ``parent_id``'s count of pending children by ``change``; a parent it
    makes due wakes idle workers."""
    rows = yield "parent_counted", {"id": parent_id, "change": change, "now": now_ms}
    moved.woke = moved.woke or any(row["woken"] for row in rows)


def _rate_limited(
    c: sqlite3.Connection,
    queries: Queries,
    rows: Sequence[sqlite3.Row],
    rates: Mapping[str, tuple[int, int]],
    now_ms: int,
) -> dict[str, int]:
    """Apply each rated key's window (``ferry.drivers.rates``) to the runs just leased, in
    claim order; the runs it has no room for are put back queued (``rate_defer``: lease and
    attempt given back, as if never claimed) before anything else sees them — the claim's
    transaction is still open. Answers the deferred runs' ids with their new due instant."""
    by_key: dict[str, list[sqlite3.Row]] = {}
    for row in rows:
        if row["name"] in rates and row["rate_key"] is not None:
            by_key.setdefault(row["rate_key"], []).append(row)
    deferred: dict[str, int] = {}
    for key, runs_of_key in by_key.items():
        limit, per_ms = rates[runs_of_key[0]["name"]]
        stored = c.execute(queries["rate_window"], {"key": key}).fetchone()
        decision = take(
            window_of(stored) if stored is not None else RateWindow(),
            now_ms=now_ms,
            limit=limit,
            per_ms=per_ms,
            booked=[bool(row["rate_booked"]) for row in runs_of_key],
        )
        after = decision.window
        c.execute(
            queries["rate_window_put"],
            {
                "key": key,
                "starts": json.dumps(after.starts),
                "booked": json.dumps(after.booked),
                "expires_at_ms": max(after.starts[-1:] + after.booked[-1:], default=now_ms)
                + per_ms,
            },
        )
        for row, until in zip(runs_of_key[decision.admitted :], decision.hints, strict=True):
            c.execute(queries["rate_defer"], {"id": row["pk"], "until": until, "now": now_ms})
            deferred[row["id"]] = until
    return deferred


def settle(
    c: sqlite3.Connection, queries: Queries, settles: Sequence[Settle], now_ms: int
) -> tuple[list[bool], Moved]:
    """Settle each attempt still held by its worker; answers which landed, and what the
    settles moved (a run back due now, runs that ended)."""
    landed, moved = [], Moved()
    for (job_id, verdict), first in zip(
        settles, first_of_each([job_id for job_id, _ in settles]), strict=True
    ):
        row = held(c, queries, job_id, verdict.worker_id, now_ms) if first else None
        if row is None:
            landed.append(False)
            continue
        fields = settle_run(
            run_of(SettleFields, row),
            verdict,
            cancel_requested=row["cancel_requested_at_ms"] is not None,
            now_ms=now_ms,
        )
        if wakes_parent(
            state=fields.state,
            awaiting_children=bool(row["awaiting_children"]),
            children_pending=row["children_pending"],
        ):  # parked on a wait whose children all ended meanwhile: due at once
            fields = replace(fields, run_at_ms=now_ms)
        error = fields.last_error
        current, total = progress_columns(fields.progress)
        acked = isinstance(verdict, AckOptions)
        c.execute(
            queries["settle"],
            {
                "id": run_pk(job_id),
                "state": fields.state,
                "attempts": fields.attempts,
                "run_at_ms": fields.run_at_ms,
                "acked": acked,
                "result": json_text(verdict.result) if isinstance(verdict, AckOptions) else None,
                "error_code": error.code if error is not None else None,
                "error_message": error.message if error is not None else None,
                "progress_current": current,
                "progress_total": total,
                "finished_at_ms": fields.finished_at_ms,
                "failure": verdict.failure if isinstance(verdict, NackOptions) else None,
                "now": now_ms,
            },
        )
        c.execute(queries["slots_release"], {"holder": job_id})
        change = StateChange(int(job_id), row["parent_id"], "running", fields.state)
        played(c, queries, counted([change], now_ms, moved))
        moved.woke = moved.woke or (
            fields.state in ("queued", "sleeping") and fields.run_at_ms <= now_ms
        )
        landed.append(True)
    return landed, moved


def renew(
    c: sqlite3.Connection,
    queries: Queries,
    renewals: Sequence[Renewal],
    now_ms: int,
    record: RecordWrite | None = None,
) -> list[RenewalAnswer]:
    """Extend each lease still held by its worker, and every slot its run holds; put
    ``record`` (a worker's presence) in the same transaction."""
    if record is not None:
        c.execute(
            queries["record_put"],
            put_parameters(
                record.space,
                record.key,
                record.value,
                now_ms=now_ms,
                expires_at_ms=record.expires_at_ms,
            ),
        )
    answers = []
    for job_id, options in renewals:
        row = held(c, queries, job_id, options.worker_id, now_ms)
        if row is None:
            answers.append(RenewalAnswer(landed=False))
            continue
        until = now_ms + options.lease_ms
        current, total = progress_columns(options.progress)
        c.execute(
            queries["heartbeat"],
            {
                "id": run_pk(job_id),
                "lease_until": until,
                "progress_current": current,
                "progress_total": total,
                "now": now_ms,
            },
        )
        c.execute(queries["slots_extend"], {"holder": job_id, "expires_at_ms": until})
        answers.append(RenewalAnswer(True, row["cancel_requested_at_ms"] is not None))
    return answers


def enqueue(
    c: sqlite3.Connection,
    queries: Queries,
    batch: EnqueueBatch,
    now_ms: int,
    parent_id: int | None = None,
) -> list[EnqueueResult]:
    """Write ``batch`` (children of ``parent_id``, if given) on the driver's writer, in the
    caller's transaction."""
    while pending := batch.pending():
        if (supersede := supersede_parameters(batch, now_ms)) is not None:
            c.execute(queries["enqueue_supersede"], supersede)
        written = c.execute(queries["enqueue"], enqueue_parameters(pending, now_ms, parent_id))
        if taken := batch.written(written.fetchall(), now_ms):
            batch.existing(c.execute(queries["enqueue_existing"], {"keys": json.dumps(taken)}))
    return batch.results()


def enqueue_parameters(
    requests: Sequence[EnqueueRequest], now_ms: int, parent_id: int | None = None
) -> dict[str, Any]:
    """``enqueue``'s parameters: the requests as a JSON array of their columns, and the
    run whose children they are (``None``: none)."""
    batch = json.dumps([stored_columns(r) for r in requests])
    return {"batch": batch, "now": now_ms, "parent_id": parent_id}


def supersede_parameters(batch: EnqueueBatch, now_ms: int) -> dict[str, Any] | None:
    """``enqueue_supersede``'s parameters for the pending requests with a dedupe rule other
    than "retained" (None: there are none)."""
    ruled = batch.superseding()
    if not ruled:
        return None
    rules = [
        {
            "key": r.idempotency_key,
            "active_only": r.dedupe.active_only,
            "window_ms": r.dedupe.window_ms,
        }
        for r in ruled
    ]
    return {"batch": json.dumps(rules), "now": now_ms, "bytes": SUPERSEDED_KEY_BYTES}
