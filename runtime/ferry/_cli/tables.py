"""Readable terminal output for the operator commands: tables and field lists (rich).

Commands build their human rendering with these and hand it to ``Outcome.text``; the
``--json`` envelope never goes through here.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

_WIDTH = 120
"""Fixed render width, so output piped to a file or a test reads the same as a terminal."""


def compact_json(value: Any) -> str:
    """A JSON value on one line, for a table cell."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """Rows under a header, rendered as text."""
    grid = Table(title=title, title_justify="left", header_style="bold")
    for column in columns:
        grid.add_column(column, overflow="fold")
    for row in rows:
        grid.add_row(*("-" if cell is None else str(cell) for cell in row))
    return _render(grid)


def fields(title: str, pairs: Iterable[tuple[str, Any]]) -> str:
    """``name  value`` lines under a title (one record, like ``jobs show``)."""
    grid = Table(title=title, title_justify="left", show_header=False, box=None)
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")
    for name, value in pairs:
        grid.add_row(name, "-" if value is None else str(value))
    return _render(grid)


def _render(renderable: Table) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=_WIDTH, no_color=True, highlight=False).print(renderable)
    return "\n".join(line.rstrip() for line in buffer.getvalue().rstrip("\n").splitlines())
