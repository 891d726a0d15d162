"""Readable terminal output for the operator commands: tables and field lists (rich).

A command hands ``Outcome.text`` a ``Rendering`` built from these, so nothing is laid out
under ``--json`` and the layout fits where it is printed (``Terminal``): colour and the
terminal's width on a TTY, plain text at a fixed width into a pipe or a file.

Every cell is a ``rich.text.Text`` of ``printable`` text: stored text is never read as rich
markup (a ``[/bold]`` in a job name is just those characters) and its control characters
reach the terminal as escapes, never as commands (see ``ferry._printable``).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from ferry._operations.envelope import Rendering, Terminal
from ferry._operations.preview import DEFAULT_PREVIEW_CHARS, preview_text
from ferry._printable import printable

CELL_CHARS = 2 * DEFAULT_PREVIEW_CHARS
"""The longest cell a table lays out; a longer one is cut with a note of what was left out.
Twice a preview, so a preview's own note (how to see the rest) is never cut off."""

STATE_STYLES: Mapping[str, str] = {
    "queued": "cyan",
    "running": "blue",
    "sleeping": "yellow",
    "completed": "green",
    "dead": "bold red",
    "cancelled": "magenta",
    "moving": "bright_cyan",
    "FAIL": "bold red",
    "ok": "green",
}
"""How a state word is coloured on a terminal (nothing else is, besides headers and codes)."""

Styler = Callable[[Any], str | None]


def state_style(value: Any) -> str | None:
    """The colour of a run state (or a check's ``ok``/``FAIL``)."""
    return STATE_STYLES.get(str(value))


def code_style(value: Any) -> str | None:
    """Error codes stand out in red."""
    return "red" if value else None


def table(
    title: str | None,
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    styles: Mapping[str, Styler] | None = None,
) -> Table:
    """Rows under a header; ``styles`` colours a column's cells by their value."""
    grid = Table(title=_text(title) if title else None, title_justify="left", header_style="bold")
    for column in columns:
        grid.add_column(_text(column), overflow="fold")
    stylers = [(styles or {}).get(column) for column in columns]
    for row in rows:
        grid.add_row(
            *(
                _text(cell, styler(cell) if styler else None)
                for cell, styler in zip(row, stylers, strict=True)
            )
        )
    return grid


def fields(title: str, pairs: Iterable[tuple[str, Any]]) -> Table:
    """``name  value`` lines under a title (one record, like ``jobs show``)."""
    grid = Table(title=_text(title), title_justify="left", show_header=False, box=None)
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")
    for name, value in pairs:
        grid.add_row(_text(name), _text(value, state_style(value) if name == "state" else None))
    return grid


def rendering(*parts: RenderableType | str) -> Rendering:
    """The parts one below the other, rendered for the terminal they are printed on; a
    ``str`` part is a paragraph of stored text, printed as it is (its control characters
    escaped, its lines kept, never wrapped: a whole input stays one line of JSON)."""

    def render(terminal: Terminal) -> str:
        return render_parts(parts, terminal)

    return render


def render_parts(parts: Sequence[RenderableType | str], terminal: Terminal) -> str:
    """``parts`` as text for ``terminal`` (ANSI colour only when it takes colour)."""
    return "\n".join(
        printable(part, lines=True) if isinstance(part, str) else _laid_out(part, terminal)
        for part in parts
    )


def _laid_out(part: RenderableType, terminal: Terminal) -> str:
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=terminal.width,
        force_terminal=terminal.colour,
        color_system="standard" if terminal.colour else None,
        no_color=not terminal.colour,
        highlight=False,
        markup=False,
        emoji=False,
    )
    console.print(part)
    return "\n".join(line.rstrip() for line in buffer.getvalue().rstrip("\n").splitlines())


def _text(value: Any, style: str | None = None) -> Text:
    """One cell: ``-`` for nothing, else the value's text, escaped and cut to a bounded
    length (laying out a long cell costs rich far more than linear time, and a terminal
    shows nobody a megabyte anyway)."""
    if value is None:
        return Text("-", style="dim")
    text = str(value)
    if len(text) > CELL_CHARS:
        text = preview_text(text, limit=CELL_CHARS).render()
    return Text(printable(text), style=style or "")
