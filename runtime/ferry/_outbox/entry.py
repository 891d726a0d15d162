"""What the relay moves, and the two seams it moves it through: the store and the publisher."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ferry._clock import Clock
from ferry.drivers.protocol import JsonValue, QueueWake


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    """One committed side effect: its ``type`` (a job name for ``JobOutboxPublisher``) and
    its JSON ``payload``; ``attempts`` counts the claims, this one included."""

    id: str
    type: str
    payload: JsonValue
    attempts: int
    created_at_ms: int


class OutboxStore(Protocol):
    """Where entries wait between the application's commit and the relay's publish."""

    @property
    def clock(self) -> Clock:
        """The clock leases and retention are measured on."""
        ...

    def wake(self) -> QueueWake:
        """Wakes an idle relay when an entry is committed."""
        ...

    async def claim(self, *, relay_id: str, lease_ms: int, limit: int) -> list[OutboxEntry]:
        """Lease up to ``limit`` unpublished entries (never claimed, or lease lapsed)."""
        ...

    async def mark_published(self, ids: Sequence[str], *, relay_id: str) -> list[str]:
        """Mark entries published if ``relay_id`` still holds them; answers those that landed."""
        ...

    async def publish_failed(self, entry_id: str, *, relay_id: str, error: str) -> None:
        """Note why a publish failed; the entry is offered again once its lease lapses."""
        ...

    async def prune(self, *, published_before_ms: int, batch: int) -> int:
        """Delete entries published before the instant, ``batch`` at a time; answers how many."""
        ...


class OutboxPublisher(Protocol):
    """Moves one entry to where it is consumed (a job queue, a broker)."""

    async def publish(self, entry: OutboxEntry) -> Any:
        """Publish ``entry``; raising leaves it unpublished, to be offered again."""
        ...
