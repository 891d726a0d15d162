"""Reading a Postgres plan (``EXPLAIN (FORMAT JSON)``): the tests that pin a statement's plan
shape walk its nodes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def plan_nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node of a JSON plan under ``node``, ``node`` first (subplans included)."""
    yield node
    for child in node.get("Plans", []):
        yield from plan_nodes(child)
