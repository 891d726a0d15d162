"""Text every driver can store: no NUL character, no lone surrogate.

PostgreSQL's ``text`` and ``jsonb`` refuse U+0000, and no UTF-8 store — PostgreSQL, SQLite,
Redis — can hold half of a surrogate pair, which a Python ``str`` can (``os.fsdecode`` of a
bad file name, ``bytes.decode(errors="surrogateescape")``, a JSON ``"\\ud800"`` escape). So the
enqueue facade checks every string that becomes part of a row before any driver sees it: the
same rule for every driver, refused with one code, instead of a driver-specific error from
deep inside the database client.
"""

from __future__ import annotations

from ferry.errors import FerryError

_FIX = (
    "remove NUL characters and unpaired surrogates before enqueueing (decode bytes with "
    "errors='replace'); base64-encode binary data into a str field"
)


def unstorable(text: str) -> str | None:
    """What makes ``text`` unstorable (as a phrase after its name), or None when it is fine."""
    if "\x00" in text:
        return f"holds a NUL character (U+0000) at index {text.index(chr(0))}"
    if not text.isascii():  # O(1) for ASCII-only strings, the common case
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as bad:
            return f"holds a lone surrogate (U+{ord(text[bad.start]):04X}) at index {bad.start}"
    return None


def not_storable(what: str, problem: str) -> FerryError:
    """``X_TEXT_NOT_STORABLE`` for ``what`` (e.g. ``input.name``), which ``problem``."""
    return FerryError("X_TEXT_NOT_STORABLE", f"{what} {problem}", _FIX)


def quoted(value: object, *, limit: int = 80) -> str:
    """``repr(value)`` for a message, cut to about ``limit`` characters (a 10 kB key stays out
    of the log line) and always storable: ``repr`` escapes NUL and lone surrogates."""
    shown = repr(value)
    return shown if len(shown) <= limit else f"{shown[: limit - 1]}…"


def storable_message(text: str, *, limit: int = 4_000) -> str:
    """``text`` fit to be stored as an error message: at most ``limit`` characters, with NUL
    characters and lone surrogates written as escapes (a job body's own exception message
    must not make its run's settle fail)."""
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(text) - limit} more characters)"
    if unstorable(text) is None:
        return text
    return text.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")
