"""The run statements' Python side: the lease fence, the settle and fan-in rules, enqueue
batches.

Each function here runs on the writer's thread inside one ``BEGIN IMMEDIATE`` transaction
(``Database.transaction``; ``write_if_held`` submits its own), so what it reads cannot
change before it writes: the fence and
the settle rules are ``ferry.drivers.settle``'s own functions applied to the row, not a
copy of them in SQL; so are the fan-in rules (``ferry.drivers.fan_in``), in the
transaction of every change of a child's or a waiting parent's state.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ferry.drivers._columns import (
    job_error_of,
    json_text,
    progress_columns,
    progress_of,
    run_of,
    run_pk,
)
from ferry.drivers._sqlite.database import Database
from ferry.drivers.fan_in import count_change, wakes_parent
from ferry.drivers.protocol import (
    ENDED_STATES,
    SUPERSEDED_KEY_BYTES,
    AckOptions,
    ClaimedJob,
    ClaimOptions,
    EnqueueRequest,
    EnqueueResult,
    JobState,
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


async def write_if_held(
    database: Database, job_id: str, worker_id: str, query: str, parameters: Mapping[str, object]
) -> bool:
    """Run the statement named ``query`` (a step, a backfill checkpoint) if ``worker_id``
    still holds run ``job_id``, in one transaction; answers whether it did."""

    def write(c: sqlite3.Connection) -> bool:
        now_ms = database.clock.now_ms()
        if held(c, database.queries, job_id, worker_id, now_ms) is None:
            return False
        c.execute(database.queries[query], parameters)
        return True

    return await database.transaction(write)


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
        "queues": _json_or_null(options.queues),
        "names": _json_or_null(options.names),
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


@dataclass
class Moved:
    """What a transaction's changes of run state mean beyond the runs themselves: whether
    a run became due now (this process's idle workers wake at once), and which runs ended
    (this process's result waiters hear of them)."""

    woke: bool = False
    ended: list[str] = field(default_factory=list)

    def state_changed(
        self,
        c: sqlite3.Connection,
        queries: Queries,
        job_id: str,
        parent_id: int | None,
        before: JobState,
        after: JobState,
        now_ms: int,
    ) -> None:
        """Run ``job_id`` (a child of ``parent_id``, if any) went from ``before`` to
        ``after``: count it in its parent (``ferry.drivers.fan_in``) and note its end."""
        if after in ENDED_STATES and before not in ENDED_STATES:
            self.ended.append(job_id)
        change = count_change(before, after)
        if parent_id is not None and change:
            self.count(c, queries, parent_id, change, now_ms)

    def count(
        self, c: sqlite3.Connection, queries: Queries, parent_id: int, change: int, now_ms: int
    ) -> None:
        """Change run ``parent_id``'s count of pending children by ``change``."""
        [[woken]] = c.execute(
            queries["parent_counted"], {"id": parent_id, "change": change, "now": now_ms}
        ).fetchall() or [[False]]
        self.woke = self.woke or bool(woken)


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
        window = (
            RateWindow(tuple(json.loads(stored["starts"])), tuple(json.loads(stored["booked"])))
            if stored is not None
            else RateWindow()
        )
        decision = take(
            window,
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
            _settle_fields(row),
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
        moved.state_changed(c, queries, job_id, row["parent_id"], "running", fields.state, now_ms)
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
            {
                "space": record.space,
                "key": record.key,
                "value": json_text(record.value),
                "expires_at_ms": record.expires_at_ms,
                "now": now_ms,
            },
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


class EnqueueBatch:
    """Enqueue requests as the ``enqueue`` and ``enqueue_existing`` statements take and
    answer them: the same two statements on the driver's writer and on the application's
    connection, whatever the batch size."""

    def __init__(self, requests: Sequence[EnqueueRequest], *, parent_id: int | None = None) -> None:
        self._requests = requests
        self._parent_id = parent_id
        self._first: dict[str, int] = {}  # key -> the request that writes it; later ones dedupe
        for index, request in enumerate(requests):
            self._first.setdefault(request.idempotency_key, index)
        self._runs: dict[str, EnqueueResult] = {}
        self.woke = False
        """A run due at once was written: idle workers should wake."""
        self.due_later: int | None = None
        """When the soonest run written for later falls due: idle workers wake then."""

    def insert(self, now_ms: int) -> dict[str, Any] | None:
        """The ``enqueue`` parameters for every key not resolved yet (None: all are)."""
        pending = [self._requests[i] for key, i in self._first.items() if key not in self._runs]
        if not pending:
            return None
        return {
            "batch": json.dumps([_enqueue_row(r) for r in pending]),
            "now": now_ms,
            "parent_id": self._parent_id,
        }

    def supersede(self, now_ms: int) -> dict[str, Any] | None:
        """The ``enqueue_supersede`` parameters for the keys not resolved yet whose
        request has a dedupe rule other than "retained" (None: there are none)."""
        ruled = [
            self._requests[i]
            for key, i in self._first.items()
            if key not in self._runs and not self._requests[i].dedupe.retained
        ]
        if not ruled:
            return None
        batch = [
            {
                "key": r.idempotency_key,
                "active_only": r.dedupe.active_only,
                "window_ms": r.dedupe.window_ms,
            }
            for r in ruled
        ]
        return {"batch": json.dumps(batch), "now": now_ms, "bytes": SUPERSEDED_KEY_BYTES}

    def inserted(self, rows: Iterable[Sequence[Any]], now_ms: int) -> dict[str, Any] | None:
        """Take the runs ``enqueue`` wrote; answers the ``enqueue_existing`` parameters for
        the keys it skipped (None: it skipped none)."""
        for job_id, key, _queue, run_at_ms in rows:
            self._runs[key] = EnqueueResult(job_id, deduplicated=False)
            if run_at_ms <= now_ms:
                self.woke = True
            elif self.due_later is None or run_at_ms < self.due_later:
                self.due_later = run_at_ms
        taken = [key for key in self._first if key not in self._runs]
        return {"keys": json.dumps(taken)} if taken else None

    def existing(self, rows: Iterable[Sequence[Any]]) -> None:
        """Take the runs already holding skipped keys (a key pruned meanwhile stays
        unresolved, and the next ``insert`` writes it again)."""
        for job_id, key in rows:
            self._runs[key] = EnqueueResult(job_id, deduplicated=True)

    @property
    def written(self) -> int:
        """How many runs the batch wrote (not deduplicated)."""
        return sum(not result.deduplicated for result in self._runs.values())

    def results(self) -> list[EnqueueResult]:
        """One result per request, in request order (a repeated key is deduplicated)."""
        return [
            EnqueueResult(self._runs[r.idempotency_key].job_id, True)
            if self._first[r.idempotency_key] != index
            else self._runs[r.idempotency_key]
            for index, r in enumerate(self._requests)
        ]


def enqueue(
    c: sqlite3.Connection, queries: Queries, batch: EnqueueBatch, now_ms: int
) -> list[EnqueueResult]:
    """Write ``batch`` on the driver's writer (in the caller's transaction)."""
    while (insert := batch.insert(now_ms)) is not None:
        if (supersede := batch.supersede(now_ms)) is not None:
            c.execute(queries["enqueue_supersede"], supersede)
        existing = batch.inserted(c.execute(queries["enqueue"], insert).fetchall(), now_ms)
        if existing is not None:
            batch.existing(c.execute(queries["enqueue_existing"], existing).fetchall())
    return batch.results()


def _settle_fields(row: sqlite3.Row) -> SettleFields:
    return SettleFields(
        state=row["state"],
        attempts=row["attempts"],
        run_at_ms=row["run_at_ms"],
        last_error=job_error_of(row["last_error_code"], row["last_error_message"]),
        progress=progress_of(row["progress_current"], row["progress_total"]),
        finished_at_ms=row["finished_at_ms"],
    )


def _enqueue_row(r: EnqueueRequest) -> dict[str, Any]:
    return {
        "name": r.name,
        "queue": r.queue,
        "payload": r.payload_json if r.payload_json is not None else json_text(r.payload),
        "idempotency_key": r.idempotency_key,
        "max_attempts": r.max_attempts,
        "run_at_ms": r.run_at_ms,
        "tenant": r.tenant,
        "actor": r.actor,
        "concurrency_key": r.concurrency_key,
        "priority": r.priority,
        "rate_key": r.rate_key,
        "traceparent": r.traceparent,
    }


def _json_or_null(values: Sequence[str] | None) -> str | None:
    return None if values is None else json.dumps(list(values))
