"""The outbox relay: committed outbox entries published, at least once.

The entries live in a driver's ``outbox`` store (``driver.outbox.append(type, payload,
connection=conn)`` writes in the caller's transaction); ``OutboxRelay`` (``ferry relay``)
publishes them through an ``OutboxPublisher`` — ``JobOutboxPublisher`` enqueues each as a job.
"""

from ferry._outbox.publisher import JobOutboxPublisher, OutboxPublisher
from ferry._outbox.relay import OutboxRelay, RelayPass

__all__ = ["JobOutboxPublisher", "OutboxPublisher", "OutboxRelay", "RelayPass"]
