"""Named SQL files: how every SQL driver keeps its statements where a reviewer reads them.

A driver's ``sql/queries`` folder holds one statement per ``<name>.sql`` file, called by
its name; ``sql/migrations`` holds the numbered migrations (``ferry.drivers._ledger``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources


@cache
def sql_files(package: str) -> Mapping[str, str]:
    """Every ``*.sql`` file of ``package``, by file stem, read once per process."""
    folder = resources.files(package)
    return {
        entry.name.removesuffix(".sql"): entry.read_text(encoding="utf-8")
        for entry in folder.iterdir()
        if entry.name.endswith(".sql")
    }
