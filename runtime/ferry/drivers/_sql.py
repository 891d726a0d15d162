"""Named SQL files: how every SQL driver keeps its statements where a reviewer reads them.

A driver's ``sql/queries`` folder holds one statement per ``<name>.sql`` file, called by
its name; ``sql/migrations`` holds the numbered migrations (``ferry.drivers._ledger``).
A file named ``_<name>.sql`` is a *fragment*, not a statement: a part several statements
share (the settle both round trips of the Postgres worker begin with), included where a
statement (or another fragment) says ``{_<name>}``, without the fragment's leading comment
(which documents the file, not the statement it lands in).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources


@cache
def sql_files(package: str) -> Mapping[str, str]:
    """Every statement of ``package`` (its ``*.sql`` files but fragments), by file stem,
    with its fragments included; read once per process."""
    folder = resources.files(package)
    files = {
        entry.name.removesuffix(".sql"): entry.read_text(encoding="utf-8")
        for entry in folder.iterdir()
        if entry.name.endswith(".sql")
    }
    fragments = {name: _fragment_body(text) for name, text in files.items() if name[0] == "_"}
    for _ in fragments:  # a fragment may include another (at most as deep as there are)
        fragments = {name: _included(body, fragments) for name, body in fragments.items()}
    statements = {}
    for name, text in files.items():
        if name[0] != "_":
            statements[name] = _included(text, fragments)
    return statements


def _included(text: str, fragments: Mapping[str, str]) -> str:
    for fragment, body in fragments.items():
        text = text.replace(f"{{{fragment}}}", body)
    return text


def _fragment_body(text: str) -> str:
    lines = text.strip().splitlines()
    while lines and lines[0].startswith("--"):
        lines.pop(0)
    return "\n".join(lines)
