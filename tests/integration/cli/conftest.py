"""Fixtures for the CLI tests: ``ferry`` run as a process against the test's schema with
``cli_app`` as its app (the seeded schema is the shared ``seeded``), and golden shapes."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.processes import Finished, ferry_env, run_ferry

HERE = Path(__file__).parent

Ferry = Callable[..., Finished]


def cli_env(dsn: str, schema: str) -> dict[str, str]:
    """The environment a ``ferry`` process gets: the test database, schema and app."""
    return ferry_env(dsn, schema, FERRY_APP="cli_app")


@pytest.fixture
def ferry(postgres_dsn: str, pg_schema: str) -> Ferry:
    """Run ``ferry <args>`` as a real process against the test's schema."""

    def run(*args: str, env: dict[str, str] | None = None) -> Finished:
        return run_ferry(*args, env=env or cli_env(postgres_dsn, pg_schema))

    return run


def shape(value: Any) -> Any:
    """The JSON structure of ``value`` with every leaf replaced by its type name."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if value is None:
        return "null"
    return type(value).__name__


def golden(name: str, value: Any) -> None:
    """Compare ``value``'s shape with ``golden/<name>.json``; ``FERRY_GOLDEN=write`` records it."""
    path = HERE / "golden" / f"{name}.json"
    if os.environ.get("FERRY_GOLDEN") == "write":
        path.write_text(json.dumps(shape(value), indent=2, sort_keys=True) + "\n")
    assert shape(value) == json.loads(path.read_text()), f"{name}: the JSON shape changed"
