"""The fleet: which worker processes are alive, what each serves and what each holds.

Every worker keeps its presence — id, host, pid, ferry version, queues, concurrency, when
it started, its last heartbeat and the runs it holds — as a record of the ``workers``
space (the ``records`` capability), written with its lease renewals in the same
statement (``heartbeat_many(..., record=)``): registering costs no round trip of its own,
and an idle worker writes it once per heartbeat interval all the same. A record expires
``PRESENCE_WINDOWS`` intervals after it was written, so a worker that stopped renewing
(killed, cut off from the database) drops out of every listing by itself, and the
maintenance's prune deletes the expired row; a worker that stops cleanly deletes its
record as it goes. Written once above the drivers: every driver with ``records`` has a
fleet registry, and a driver without it is refused by name where the fleet is read.
"""

from __future__ import annotations

import os
import socket
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ferry._identity import ferry_version
from ferry.drivers.capabilities import RECORDS, need, offered
from ferry.drivers.protocol import JobDriver, JsonValue, RecordStore, RecordWrite

WORKERS = "workers"
"""The record space of the fleet registry (one record per worker id)."""
PRESENCE_WINDOWS = 3
"""A presence lasts this many heartbeat intervals: one late beat does not drop a worker,
three missed ones do."""


@dataclass(frozen=True, slots=True)
class WorkerPresence:
    """One worker process as the registry knows it."""

    id: str
    host: str
    pid: int
    version: str
    queues: tuple[str, ...]
    """The queues it claims from."""
    concurrency: int
    started_at_ms: int
    heartbeat_at_ms: int
    runs: tuple[str, ...]
    """The runs whose leases it renewed with this heartbeat."""
    expires_at_ms: int


def presence_record(
    *,
    worker_id: str,
    queues: Sequence[str],
    concurrency: int,
    started_at_ms: int,
    now_ms: int,
    runs: Sequence[str],
    interval_ms: int,
) -> RecordWrite:
    """This process's presence as the record its next heartbeat writes."""
    expires = now_ms + PRESENCE_WINDOWS * interval_ms
    value: dict[str, JsonValue] = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "version": ferry_version(),
        "queues": list(queues),
        "concurrency": concurrency,
        "started_at_ms": started_at_ms,
        "heartbeat_at_ms": now_ms,
        "runs": list(runs),
        "expires_at_ms": expires,
    }
    return RecordWrite(WORKERS, worker_id, value, expires)


def registry(driver: JobDriver, *, by: str) -> RecordStore:
    """The store the registry lives in; ``X_DRIVER_CAPABILITY`` (naming ``by``) without one."""
    return need(driver, RECORDS, by=by)


def keeps_registry(driver: JobDriver) -> bool:
    """Whether workers on ``driver`` register themselves (it offers ``records``)."""
    return offered(driver, RECORDS) is not None


async def live_workers(driver: JobDriver, *, by: str) -> list[WorkerPresence]:
    """Every worker whose presence has not expired, oldest first (then by id)."""
    records = await registry(driver, by=by).scan(WORKERS, now_ms=driver.clock.now_ms())
    workers = [_presence(worker_id, value) for worker_id, value in records.items()]
    return sorted((w for w in workers if w is not None), key=lambda w: (w.started_at_ms, w.id))


async def depart(driver: JobDriver, worker_id: str) -> None:
    """Forget this worker's presence (a clean stop: it leaves the listing at once)."""
    if keeps_registry(driver):
        await registry(driver, by="a worker leaving the fleet").delete(WORKERS, worker_id)


def workers_per_queue(workers: Sequence[WorkerPresence]) -> Mapping[str, int]:
    """How many live workers claim from each queue."""
    return Counter(queue for worker in workers for queue in set(worker.queues))


def _presence(worker_id: str, value: JsonValue) -> WorkerPresence | None:
    """The presence a record holds (None for a record this ferry cannot read: a newer
    one's shape is skipped, never a failure of the listing)."""
    if not isinstance(value, dict):
        return None
    try:
        return WorkerPresence(
            id=worker_id,
            host=str(value["host"]),
            pid=int(value["pid"]),
            version=str(value["version"]),
            queues=tuple(str(q) for q in value["queues"]),
            concurrency=int(value["concurrency"]),
            started_at_ms=int(value["started_at_ms"]),
            heartbeat_at_ms=int(value["heartbeat_at_ms"]),
            runs=tuple(str(r) for r in value["runs"]),
            expires_at_ms=int(value["expires_at_ms"]),
        )
    except (KeyError, TypeError, ValueError):
        return None
