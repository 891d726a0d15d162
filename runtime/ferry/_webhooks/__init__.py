"""Outbound webhooks: ``webhook(...)`` is a job that delivers one event to one endpoint,
signed the Standard Webhooks way; ``verify_webhook`` is the receiver's check."""

from ferry._webhooks.factory import (
    DEFAULT_WEBHOOK_DISABLE_AFTER,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    webhook,
)
from ferry._webhooks.ledger import (
    EndpointState,
    MemoryWebhookLedger,
    WebhookAttempt,
    WebhookLedger,
    memory_webhook_ledger,
)
from ferry._webhooks.signing import new_webhook_secret, verify_webhook

__all__ = [
    "DEFAULT_WEBHOOK_DISABLE_AFTER",
    "EndpointState",
    "MemoryWebhookLedger",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEvent",
    "WebhookLedger",
    "memory_webhook_ledger",
    "new_webhook_secret",
    "verify_webhook",
    "webhook",
]
