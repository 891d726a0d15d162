"""A stored JSON value shown to a person: its compact JSON, cut to a bounded length.

A run's input, result and step results can be megabytes (an old row from before the
payload limit, a driver built with a high ``max_payload_bytes``, a large result). Laying
such text out for a terminal or a page costs far more than linear time, so every human
rendering — ``ferry jobs show``, the dashboard's run page — shows a preview of at most
``limit`` characters and says how much it left out; the whole value stays one explicit
step away (``--full``, a download link).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

DEFAULT_PREVIEW_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class Preview:
    """The first characters of a value's JSON, and how long the whole of it is."""

    text: str
    total_chars: int

    @property
    def omitted_chars(self) -> int:
        """How many characters the preview leaves out (0: it is the whole value)."""
        return self.total_chars - len(self.text)

    def render(self, more: str = "") -> str:
        """The preview, with a note of what was left out (and ``more``, e.g. how to see it)."""
        if not self.omitted_chars:
            return self.text
        return f"{self.text}… ({self.omitted_chars:,} more characters{more})"


def json_text(value: Any) -> str:
    """``value`` as one line of JSON (non-JSON leaves as their ``str``)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def preview_json(value: Any, *, limit: int = DEFAULT_PREVIEW_CHARS) -> Preview:
    """At most ``limit`` characters of ``value``'s one-line JSON. Linear in the value's
    size, whatever its shape: one C-speed ``json.dumps`` and a slice."""
    return preview_text(json_text(value), limit=limit)


def preview_text(text: str, *, limit: int = DEFAULT_PREVIEW_CHARS) -> Preview:
    """At most ``limit`` characters of ``text`` (an error message, a key)."""
    return Preview(text[:limit], len(text))
