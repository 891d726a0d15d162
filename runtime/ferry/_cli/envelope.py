"""The CLI's output contract: one JSON envelope for ``--json``, readable text otherwise.

``{"ok", "command", "summary", "findings", "data"}`` — ``findings`` carries every refusal
as ``{"code", "message", "fix"}`` so a script can branch on the ``X_*`` code, and a
failed command exits non-zero with ``ok: false``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from ferry.errors import FerryError


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
