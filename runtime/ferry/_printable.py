"""Stored text made safe for a terminal: every control character written out as an escape.

A run's name, queue, tenant, key, error message or traceback is data some application
wrote, and a terminal obeys what it prints: ``ESC [`` sequences recolour or clear the
screen, ``ESC ] 8`` plants a hyperlink whose target the operator never sees, a carriage
return overwrites what was printed before it on the line, and the bidirectional overrides
(U+202E) reorder what is shown. So every human rendering of stored text — the CLI's tables
and field lists, its refusal lines, the text log format — shows those characters as
escapes (``\\x1b``, ``\\u202e``) instead of sending them. The JSON renderings need nothing
of this: JSON escapes them already.
"""

from __future__ import annotations

import re

_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[{_CONTROLS}\t\n]")
_UNSAFE_KEEPING_LINES = re.compile(f"[{_CONTROLS}]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def printable(text: str, *, lines: bool = False) -> str:
    """``text`` with every C0/C1 control character (ESC, CR, BEL, DEL, …) and every
    bidirectional or line-separator format character written as an escape; with ``lines``,
    newlines and tabs are kept (a traceback is shown as the lines it is)."""
    if text.isascii() and text.isprintable():  # the common case: nothing to escape
        return text
    pattern = _UNSAFE_KEEPING_LINES if lines else _UNSAFE
    return pattern.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
