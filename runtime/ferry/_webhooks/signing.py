"""Standard Webhooks signing: ``webhook-id``, ``webhook-timestamp``, ``webhook-signature``.

The signed content is ``"{id}.{timestamp}.{body}"``; each active secret adds one
``v1,<base64 HMAC-SHA256>`` to the space-separated signature header, so a receiver that
holds either the old or the new secret verifies during a rotation. Secrets are
``whsec_<base64 key>``. ``verify_webhook`` is the receiver's half.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets as _random
from collections.abc import Mapping, Sequence

from ferry._clock import SystemClock
from ferry._duration import Duration, to_ms
from ferry.errors import FerryError

SECRET_PREFIX = "whsec_"
SIGNATURE_VERSION = "v1"
DEFAULT_TOLERANCE = "5m"
"""How far a received timestamp may be from the receiver's clock (replay protection)."""


def new_webhook_secret() -> str:
    """A fresh ``whsec_`` secret with a 32-byte key."""
    return SECRET_PREFIX + base64.b64encode(_random.token_bytes(32)).decode()


def secret_key(secret: str) -> bytes:
    """The HMAC key of a ``whsec_<base64>`` secret; ``ValueError`` naming what is wrong."""
    if not isinstance(secret, str) or not secret.startswith(SECRET_PREFIX):
        raise ValueError(f"a webhook secret must start with {SECRET_PREFIX!r}")
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the part after whsec_ is not base64") from None
    if not key:
        raise ValueError("the key after whsec_ is empty")
    return key


def signature(key: bytes, message_id: str, timestamp_s: int, body: bytes) -> str:
    """One ``v1,<base64>`` signature of a message under one key."""
    content = f"{message_id}.{timestamp_s}.".encode() + body
    digest = hmac.new(key, content, hashlib.sha256).digest()
    return f"{SIGNATURE_VERSION},{base64.b64encode(digest).decode()}"


def signed_headers(
    keys: Sequence[bytes], message_id: str, timestamp_s: int, body: bytes
) -> dict[str, str]:
    """The three Standard Webhooks headers, one signature per active key."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp_s),
        "webhook-signature": " ".join(signature(k, message_id, timestamp_s, body) for k in keys),
    }


def verify_webhook(
    secrets: str | Sequence[str],
    headers: Mapping[str, str],
    body: bytes | str,
    *,
    now_ms: int | None = None,
    tolerance: Duration = DEFAULT_TOLERANCE,
) -> str:
    """Check a received webhook against the receiver's secret(s); answers its ``webhook-id``.

    Refuses with ``X_WEBHOOK_SIGNATURE_INVALID`` when a header is missing, the timestamp
    is further than ``tolerance`` from ``now_ms`` (default: the wall clock), or no
    signature matches any secret.
    """
    if now_ms is None:
        now_ms = SystemClock().now_ms()
    lowered = {name.lower(): value for name, value in headers.items()}
    missing = [
        h for h in ("webhook-id", "webhook-timestamp", "webhook-signature") if h not in lowered
    ]
    if missing:
        raise _invalid(f"the request lacks the header(s) {', '.join(missing)}")
    message_id = lowered["webhook-id"]
    try:
        timestamp_s = int(lowered["webhook-timestamp"])
    except ValueError:
        raise _invalid(
            f"webhook-timestamp {lowered['webhook-timestamp']!r} is not a number"
        ) from None
    skew_ms = abs(now_ms - timestamp_s * 1000)
    if skew_ms > to_ms(tolerance, what="verify tolerance"):
        raise _invalid(f"webhook {message_id} is timestamped {skew_ms} ms from now (a replay?)")
    raw = body.encode() if isinstance(body, str) else body
    offered = [s for s in lowered["webhook-signature"].split(" ") if s]
    for secret in [secrets] if isinstance(secrets, str) else secrets:
        try:
            key = secret_key(secret)
        except ValueError as bad:
            raise FerryError(
                "X_INVARIANT",
                f"the receiver's webhook secret is malformed: {bad}",
                "configure the whsec_ secret exactly as the sender issued it",
            ) from None
        expected = signature(key, message_id, timestamp_s, raw)
        if any(hmac.compare_digest(expected, candidate) for candidate in offered):
            return message_id
    raise _invalid(f"no signature on webhook {message_id} matches the receiver's secret(s)")


def _invalid(message: str) -> FerryError:
    return FerryError(
        "X_WEBHOOK_SIGNATURE_INVALID",
        message,
        "reject the request; check the receiver holds a current whsec_ secret and its clock "
        "is in sync",
    )
