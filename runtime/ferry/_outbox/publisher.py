"""``JobOutboxPublisher``: each entry becomes one job run, through the one enqueue facade.

The entry's ``type`` names the job and its ``payload`` is the job's input. The job's own
idempotency key dedupes a second publish of the same entry (a relay that crashed between
publishing and marking), so at-least-once publishing still yields one run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ferry._jobs.facade import enqueue
from ferry._jobs.registry import resolve_job
from ferry.drivers.protocol import EnqueueResult, OutboxEntry
from ferry.errors import FerryError

if TYPE_CHECKING:
    from ferry._app import Api


class OutboxPublisher(Protocol):
    """Moves one entry to where it is consumed (a job queue, a broker)."""

    async def publish(self, entry: OutboxEntry) -> Any:
        """Publish ``entry``; raising leaves it unpublished, to be offered again."""
        ...


class JobOutboxPublisher:
    """Enqueues each entry as a run of the job its ``type`` names, on the configured driver."""

    def __init__(self, api: Api) -> None:
        self._api = api

    async def publish(self, entry: OutboxEntry) -> EnqueueResult:
        definition = resolve_job(entry.type, self._api.jobs)
        if definition is None:
            raise FerryError(
                "X_JOB_UNKNOWN",
                f'outbox entry {entry.id} has type "{entry.type}", which names no job of '
                "this relay's application",
                "run the relay with --app naming the module that declares the job, "
                "or append with the job's name as the type",
            )
        return await enqueue(definition, entry.payload)
