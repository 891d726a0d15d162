"""Helpers the e2e tests share: bounded waits and reading manifests."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from control_plane import REPO

T = TypeVar("T")


def wait_for(what: str, probe: Callable[[], T | None], budget_s: float = 60.0) -> T:
    """Poll ``probe`` until it returns something truthy; a bounded guard, not a timing claim."""
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"{what}: not seen within {budget_s} s")


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    """A container's env as ``{name: value or valueFrom}``."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def example(name: str) -> Path:
    return REPO / "examples" / "k8s" / name
