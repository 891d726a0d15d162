"""The outbox append rules every driver applies before it writes an entry."""

from __future__ import annotations

from typing import Any, Protocol

from ferry._bridge import default_connection, run_sync
from ferry._payload import to_json
from ferry._tracecontext import current_traceparent
from ferry.drivers.protocol import JsonValue
from ferry.errors import FerryError


def appended_under() -> str | None:
    """The trace context an entry appended now carries (``None``: nothing traced here)."""
    return current_traceparent()


def checked_entry(type: Any, payload: Any) -> JsonValue:
    """The entry's payload as plain JSON, once its type names what happened."""
    if not isinstance(type, str) or not type or type != type.strip():
        raise FerryError(
            "X_INVARIANT",
            f"outbox entry type {type!r} must be a non-empty string without surrounding spaces",
            'name what happened or which job consumes it, e.g. type="send_receipt"',
        )
    return to_json(payload, what=f'outbox entry "{type}" payload')


class _Appends(Protocol):
    async def append(self, type: str, payload: Any, *, connection: Any) -> str: ...


class SyncAppend:
    """``append_sync``, written once for every driver's outbox over its ``append``."""

    def append_sync(self: _Appends, type: str, payload: Any, *, connection: Any = None) -> str:
        """``append`` for sync code: through a blocking connection (psycopg, a SQLAlchemy
        ``Session``, Django's) on this thread, in its transaction; without one, on the
        loop the driver serves (``ferry._bridge``)."""
        connection = default_connection(connection)
        return run_sync(
            lambda: self.append(type, payload, connection=connection),
            joined=connection is not None,
            what=f'outbox append of "{type}"',
        )
