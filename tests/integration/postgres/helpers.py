"""Small helpers shared by the Postgres driver tests."""

from __future__ import annotations

import dataclasses
from typing import Any

from ferry.drivers.protocol import EnqueueRequest


def send(key: str, **changes: Any) -> EnqueueRequest:
    """A run of job "send" on queue "default" under idempotency key ``key``."""
    return dataclasses.replace(
        EnqueueRequest("send", "default", {"key": key}, key, max_attempts=3), **changes
    )
