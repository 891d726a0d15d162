"""Outbound webhooks: ``webhook(...)`` is a job that delivers one event to one endpoint,
signed the Standard Webhooks way; ``verify_webhook`` is the receiver's check. The ledger
of attempts is the driver's ``webhooks`` store."""

from ferry._webhooks.factory import (
    DEFAULT_WEBHOOK_DISABLE_AFTER,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    webhook,
)
from ferry._webhooks.signing import new_webhook_secret, verify_webhook

__all__ = [
    "DEFAULT_WEBHOOK_DISABLE_AFTER",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEvent",
    "new_webhook_secret",
    "verify_webhook",
    "webhook",
]
