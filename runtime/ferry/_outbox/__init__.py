"""The transactional outbox: side effects recorded with the commit, published after it.

``postgres_outbox(dsn).append(type, payload, connection=conn)`` writes in the caller's
transaction; ``OutboxRelay`` (``ferry relay``) publishes committed entries through an
``OutboxPublisher`` — ``JobOutboxPublisher`` enqueues each as a job.
"""

from ferry._outbox.entry import OutboxEntry, OutboxPublisher, OutboxStore
from ferry._outbox.postgres import PostgresOutbox, postgres_outbox
from ferry._outbox.publisher import JobOutboxPublisher
from ferry._outbox.relay import OutboxRelay, RelayPass

__all__ = [
    "JobOutboxPublisher",
    "OutboxEntry",
    "OutboxPublisher",
    "OutboxRelay",
    "OutboxStore",
    "PostgresOutbox",
    "RelayPass",
    "postgres_outbox",
]
