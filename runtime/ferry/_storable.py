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

MAX_KEY_BYTES = 512
"""The longest idempotency (and concurrency) key, in bytes of UTF-8: a key is a unique-index
entry, and every driver's index has a row-size limit well above this (PostgreSQL's btree
refuses entries over about 2.7 kB)."""

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


def checked_key(key: str, *, what: str, code: str, fix: str | None = None) -> str:
    """``key`` if every driver stores it (``X_TEXT_NOT_STORABLE``) and its UTF-8 form fits
    a unique index on every driver (``MAX_KEY_BYTES``, else ``code`` with ``fix``)."""
    problem = unstorable(key)
    if problem is not None:
        raise not_storable(f"{what} {quoted(key)}", problem)
    size = len(key) if key.isascii() else len(key.encode("utf-8"))
    if size > MAX_KEY_BYTES:
        raise FerryError(
            code,
            f"{what} {quoted(key)} is {size:,} bytes, over the {MAX_KEY_BYTES}-byte limit",
            fix
            or 'derive a short key from the input\'s ids, e.g. f"onboard:{i.org_id}"; for a long '
            "natural key, use its hash (hashlib.sha256(text.encode()).hexdigest())",
        )
    return key


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
