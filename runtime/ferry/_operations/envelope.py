"""The one output contract: the JSON envelope of ``--json`` and of every MCP tool result.

``{"ok", "command", "summary", "findings", "data"}`` — ``findings`` carries every refusal
as ``{"code", "message", "fix"}`` so a script can branch on the ``X_*`` code, and a
failed command exits non-zero with ``ok: false``. Keys are camelCase (``camel_keys``), and
every instant ``…AtMs`` or ``atMs`` (epoch milliseconds) has its ISO 8601 twin ``…At``
beside it;
stored values (a run's input, result, step results) stay as they were stored.

Without ``--json`` stdout carries only the result (the human rendering) and stderr the
refusals, so a refusal never lands where a pipe or a protocol expects the result.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

from ferry._printable import printable
from ferry.errors import FerryError


def camel_keys(value: Any) -> Any:
    """``value`` with every dict key in camelCase, the JSON envelope's key style
    (``concurrencyKey``, ``nextMs``) — the same names the spec's examples use — and beside
    every instant ``…AtMs`` (or ``…UntilMs``) its ISO 8601 form ``…At`` (``createdAtMs`` →
    ``createdAt``; ``rateDeferredUntilMs`` → ``rateDeferredUntil``)."""
    if isinstance(value, dict):
        cased: dict[str, Any] = {}
        for key, item in value.items():
            name = _camel(str(key))
            cased[name] = camel_keys(item)
            if name.endswith(("AtMs", "UntilMs")) or name == "atMs":
                cased[name[:-2]] = iso_instant(item)
        return cased
    if isinstance(value, list | tuple):
        return [camel_keys(item) for item in value]
    return value


def iso_instant(ms: Any) -> str | None:
    """An epoch-ms instant as ISO 8601 in UTC to the millisecond (``2026-01-01T00:00:00.000Z``);
    None for no instant (or one no calendar holds)."""
    if not isinstance(ms, int) or isinstance(ms, bool):
        return None
    try:
        moment = datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True, slots=True)
class Action:
    """What an operator action did: a summary line, its JSON data, its banner key."""

    summary: str
    data: dict[str, Any]
    notice: str


@dataclass(frozen=True, slots=True)
class Terminal:
    """Where a human rendering is printed: whether it may carry colour, and how wide it is.

    Colour only on a terminal (never into a pipe or a file), and never with ``NO_COLOR``
    set or ``TERM=dumb``; a pipe gets a fixed width, so it reads the same everywhere."""

    colour: bool
    width: int

    PIPE_WIDTH = 120

    @classmethod
    def of(cls, stream: TextIO) -> Terminal:
        """What ``stream`` is."""
        tty = _isatty(stream)
        colour = tty and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
        width = shutil.get_terminal_size((cls.PIPE_WIDTH, 24)).columns if tty else cls.PIPE_WIDTH
        return cls(colour, width)


Rendering = Callable[[Terminal], str]
"""A human rendering, made only when it is printed (never under ``--json``)."""


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@dataclass
class Outcome:
    """What a command produced: a summary line, the data, and any findings."""

    command: str
    summary: str
    data: Any = None
    findings: list[dict[str, str]] = field(default_factory=list)
    ok: bool = True
    text: str | Rendering | None = None
    """The human rendering (a table), or how to make it; the summary alone when None."""
    silent: bool = False
    """Print nothing: the command owned stdout (``ferry mcp`` over stdio speaks on it)."""

    @classmethod
    def refused(cls, command: str, error: FerryError) -> Outcome:
        return cls(command, error.message, None, [error.to_dict()], ok=False)

    def envelope(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "command": self.command,
            "summary": self.summary,
            "findings": self.findings,
            "data": self.data,
        }

    def emit(self, *, as_json: bool, out: TextIO | None = None, err: TextIO | None = None) -> int:
        """Print the outcome: the envelope (``as_json``) or the human rendering on ``out``
        (stdout), each refusal's ``CODE: message`` and ``fix:`` line on ``err`` (stderr).
        Returns the process exit code."""
        if self.silent and self.ok:
            return 0
        stream = out or sys.stdout
        if as_json:
            stream.write(json.dumps(self.envelope(), default=str) + "\n")
            return 0 if self.ok else 1
        if self.text is not None:
            text = self.text if isinstance(self.text, str) else self.text(Terminal.of(stream))
            stream.write(text + "\n")
        elif self.ok:
            stream.write(printable(self.summary) + "\n")
        for finding in self.findings:
            (err or sys.stderr).write(
                f"{finding['code']}: {printable(finding['message'])}\n"
                f"fix: {printable(finding['fix'])}\n"
            )
        return 0 if self.ok else 1
