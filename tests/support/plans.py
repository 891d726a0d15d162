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


def scans_of(plan: list[dict[str, Any]], relation: str) -> list[tuple[str, str | None]]:
    """How ``EXPLAIN (FORMAT JSON)``'s ``plan`` reads ``relation``: (node type, index) for
    every node on it."""
    return [
        (node["Node Type"], node.get("Index Name"))
        for node in plan_nodes(plan[0]["Plan"])
        if node.get("Relation Name") == relation
    ]
