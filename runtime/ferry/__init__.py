"""ferry: durable background work for Python on PostgreSQL.

The public surface is what this module exports, plus the documented submodules
``ferry.drivers`` (the drivers and the driver protocol), ``ferry.tasks`` (cron),
``ferry.testing`` (the harness), ``ferry.admin`` (the dashboard as an ASGI app),
``ferry.metrics`` (the metrics port) and ``ferry.errors``. Every other module is
``_``-private and may change without notice.
"""

from ferry._app import define_api
from ferry._backfill import BackfillPage, backfill
from ferry._clock import Clock, SystemClock
from ferry._jobs import (
    AbortSignal,
    Concurrency,
    JobContext,
    JobHandle,
    RateLimit,
    Retry,
    Settled,
    Step,
    SyncStep,
    job,
    set_job_driver,
    throw_if_aborted,
    use_connection,
)
from ferry._jobs.children import ChildOutcome, Children
from ferry._jobs.policy import Caps
from ferry._jobs.verdict import NoRetry, RetryAfter
from ferry._lifecycle import Role, run_roles
from ferry._outbox import JobOutboxPublisher, OutboxPublisher, OutboxRelay
from ferry._scheduler import Scheduler
from ferry._webhooks import (
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    new_webhook_secret,
    verify_webhook,
    webhook,
)
from ferry._worker import JobWorker, job_worker
from ferry.drivers.protocol import EnqueueResult, RunStatus
from ferry.errors import FerryError
from ferry.tasks import task

__all__ = [
    "AbortSignal",
    "BackfillPage",
    "Caps",
    "ChildOutcome",
    "Children",
    "Clock",
    "Concurrency",
    "EnqueueResult",
    "FerryError",
    "JobContext",
    "JobHandle",
    "JobOutboxPublisher",
    "JobWorker",
    "NoRetry",
    "OutboxPublisher",
    "OutboxRelay",
    "RateLimit",
    "Retry",
    "RetryAfter",
    "Role",
    "RunStatus",
    "Scheduler",
    "Settled",
    "Step",
    "SyncStep",
    "SystemClock",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEvent",
    "backfill",
    "define_api",
    "job",
    "job_worker",
    "new_webhook_secret",
    "run_roles",
    "set_job_driver",
    "task",
    "throw_if_aborted",
    "use_connection",
    "verify_webhook",
    "webhook",
]
