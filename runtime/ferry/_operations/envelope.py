"""The one output contract: the JSON envelope of ``--json`` and of every MCP tool result.

``{"ok", "command", "summary", "findings", "data"}`` — ``findings`` carries every refusal
as ``{"code", "message", "fix"}`` so a script can branch on the ``X_*`` code, and a
failed command exits non-zero with ``ok: false``. Keys are camelCase (``camel_keys``);
stored values (a run's input, result, step results) stay as they were stored.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from ferry.errors import FerryError


def camel_keys(value: Any) -> Any:
    """``value`` with every dict key in camelCase, the JSON envelope's key style
    (``concurrencyKey``, ``nextMs``) — the same names the spec's examples use."""
    if isinstance(value, dict):
        return {_camel(str(key)): camel_keys(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [camel_keys(item) for item in value]
    return value


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True, slots=True)
class Action:
    """What an operator action did: a summary line, its JSON data, its banner key."""

    summary: str
    data: dict[str, Any]
    notice: str


@dataclass
class Outcome:
    """What a command produced: a summary line, the data, and any findings."""

    command: str
    summary: str
    data: Any = None
    findings: list[dict[str, str]] = field(default_factory=list)
    ok: bool = True
    text: str | None = None
    """The human rendering (a table); the summary alone when None."""
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

    def emit(self, *, as_json: bool, out: TextIO | None = None) -> int:
        """Print the outcome; returns the process exit code."""
        if self.silent and self.ok:
            return 0
        stream = out or sys.stdout
        if as_json:
            stream.write(json.dumps(self.envelope(), default=str) + "\n")
        elif self.ok:
            stream.write((self.text if self.text is not None else self.summary) + "\n")
        else:
            for finding in self.findings:
                stream.write(f"{finding['code']}: {finding['message']}\nfix: {finding['fix']}\n")
        return 0 if self.ok else 1
