"""Readable terminal output for the operator commands: tables and field lists (rich).

Commands build their human rendering with these and hand it to ``Outcome.text``; the
``--json`` envelope never goes through here.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from ferry._operations.preview import DEFAULT_PREVIEW_CHARS, preview_text

_WIDTH = 120
"""Fixed render width, so output piped to a file or a test reads the same as a terminal."""

CELL_CHARS = 2 * DEFAULT_PREVIEW_CHARS
"""The longest cell a table lays out; a longer one is cut with a note of what was left out.
Twice a preview, so a preview's own note (how to see the rest) is never cut off."""


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """Rows under a header, rendered as text."""
    grid = Table(title=title, title_justify="left", header_style="bold")
    for column in columns:
        grid.add_column(column, overflow="fold")
    for row in rows:
        grid.add_row(*(_cell(cell) for cell in row))
    return _render(grid)


def fields(title: str, pairs: Iterable[tuple[str, Any]]) -> str:
    """``name  value`` lines under a title (one record, like ``jobs show``)."""
    grid = Table(title=title, title_justify="left", show_header=False, box=None)
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")
    for name, value in pairs:
        grid.add_row(name, _cell(value))
    return _render(grid)


def _cell(value: Any) -> str:
    """One cell's text, cut to a bounded length: laying out a long cell costs rich far
    more than linear time, and a terminal shows nobody a megabyte anyway."""
    if value is None:
        return "-"
    text = str(value)
    return text if len(text) <= CELL_CHARS else preview_text(text, limit=CELL_CHARS).render()


def _render(renderable: Table) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=_WIDTH, no_color=True, highlight=False).print(renderable)
    return "\n".join(line.rstrip() for line in buffer.getvalue().rstrip("\n").splitlines())
