"""The outbox append rules every driver applies before it writes an entry."""

from __future__ import annotations

from typing import Any, Protocol

from ferry._bridge import default_connection, run_sync
from ferry._payload import json_text, to_json
from ferry._tracecontext import current_traceparent
from ferry.errors import FerryError


def entry_parameters(type: Any, payload: Any, *, now_ms: int) -> dict[str, Any]:
    """The ``outbox_append`` statement's parameters for an entry appended now — once its
    type names what happened and its payload is plain JSON — carrying the trace context it
    was appended under (``None``: nothing traced here)."""
    if not isinstance(type, str) or not type or type != type.strip():
        raise FerryError(
            "X_INVARIANT",
            f"outbox entry type {type!r} must be a non-empty string without surrounding spaces",
            'name what happened or which job consumes it, e.g. type="send_receipt"',
        )
    document = to_json(payload, what=f'outbox entry "{type}" payload')
    return {
        "type": type,
        "payload": json_text(document),
        "now": now_ms,
        "traceparent": current_traceparent(),
    }


def outside_transaction(type: str, fix: str) -> FerryError:
    """The refusal of an append on a connection with no open transaction: the entry would
    commit on its own, whatever becomes of the business write it announces — exactly the
    gap the outbox exists to close."""
    return FerryError("X_INVARIANT", f'outbox append of "{type}" ran outside a transaction', fix)


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
