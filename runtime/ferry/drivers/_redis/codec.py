"""Values as script arguments.

Arguments cross as strings; an optional one is ``""`` when absent and ``"=" + value`` when
present (``lua/lib.lua``'s ``opt``), so an empty string stays distinguishable from none.
"""

from __future__ import annotations

from ferry.drivers._columns import json_text, stored_columns
from ferry.drivers.protocol import EnqueueRequest

__all__ = [
    "json_text",
    "opt",
    "request_args",
]


def opt(value: object) -> str:
    """An optional script argument."""
    return "" if value is None else f"={value}"


def request_args(r: EnqueueRequest) -> list[str]:
    """One enqueue request as the ``enqueue`` (and ``enqueue_children``) script's 12
    arguments: its stored columns (``_columns.stored_columns``), each an ``opt``."""
    return [opt(value) for value in stored_columns(r).values()]
