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


def read_through(scans: list[tuple[str, str | None]], index: str) -> bool:
    """Whether ``scans`` (``scans_of``) read their relation, and only through ``index``; a
    ``ModifyTable`` node writes the rows its subplan found, so it reads nothing itself."""
    return bool(scans) and all(kind == "ModifyTable" or name == index for kind, name in scans)
