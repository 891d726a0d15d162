"""What may be stored: JSON, exactly, checked before anything reaches a queue.

Pydantic would happily turn a ``set`` into a list or ``bytes`` into a string on the way
to JSON; a payload that changes shape in storage is a bug that surfaces days later in a
retry. So a value is walked as it is and refused, with the path of the offending field,
unless it has one obvious JSON form. Scalars with a canonical string form (UUID, dates,
``Decimal``, enums) are written in that form; the input schema reads them back.

The walk also keeps what every driver can store, so a value enqueues on all of them or on
none: text without NUL or lone surrogates (``ferry._storable``), at most ``MAX_DEPTH``
levels of nesting, integers Python can turn into text, and floats that come back as
written. An enqueued payload is serialised here once (``to_json_text``): the driver
stores that text, and its size is what ``max_payload_bytes`` limits.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum
from typing import Any, Final, TypeAlias
from uuid import UUID

from pydantic import BaseModel
from pydantic_core import to_json as pydantic_to_json
from pydantic_core import to_jsonable_python

from ferry._checks import require_count
from ferry._storable import not_storable, quoted, unstorable
from ferry.errors import FerryError

JsonValue: TypeAlias = Any
"""A value with a JSON form (checked here; ``Any`` for mypy's sake)."""

MAX_DEPTH: Final = 64
"""Containers inside containers a stored value may hold. A payload is a pointer to your
own rows, and a deeper one is a recursion bomb for every reader (Python's own included)."""

DEFAULT_MAX_PAYLOAD_BYTES: Final = 1_048_576
"""A driver's default limit on one enqueued payload: 1 MiB of UTF-8 JSON text."""

_PAYLOAD_BYTES_CEILING: Final = 255 * 1_048_576
"""PostgreSQL's jsonb holds at most about 256 MB, so no driver may promise more."""

_MAX_INT_BITS: Final = 14_000
"""About 4,200 decimal digits: below Python's 4,300-digit limit on int-to-text conversion,
so every stored integer can be written out and read back."""

_EXACT_FLOAT_LIMIT: Final = 1e16
"""From here up, ``repr`` writes a float with an exponent (``1e+16``) and PostgreSQL's
jsonb reads it back as an integer; every such float is a whole number, so it is stored as
that integer — the same number, exactly, on every driver."""

_CANONICAL_SCALARS = (UUID, datetime, date, time, timedelta)
_SHOWN_PATH_PARTS: Final = 8


def payload_limit(max_payload_bytes: object) -> int:
    """``max_payload_bytes`` as a driver's limit: ``X_INVARIANT`` for no byte count,
    ``X_OUT_OF_RANGE`` for one over what PostgreSQL's jsonb holds (no store keeps it)."""
    if (
        isinstance(max_payload_bytes, int)
        and not isinstance(max_payload_bytes, bool)
        and max_payload_bytes > _PAYLOAD_BYTES_CEILING
    ):
        raise FerryError(
            "X_OUT_OF_RANGE",
            f"max_payload_bytes={max_payload_bytes:,} is over the {_PAYLOAD_BYTES_CEILING:,} "
            "bytes PostgreSQL's jsonb can hold",
            "keep payloads small (ids, not records) and the limit at most that",
        )
    require_count(
        max_payload_bytes,
        what="max_payload_bytes={}",
        fix=f"leave it at {DEFAULT_MAX_PAYLOAD_BYTES:,} (1 MiB), or give a positive byte count",
    )
    assert isinstance(max_payload_bytes, int)
    return max_payload_bytes


def json_text(value: JsonValue) -> str:
    """``value`` (already plain JSON data) as compact JSON text, the form drivers store.

    pydantic-core's encoder, not ``json.dumps``: it writes the same text for every value
    the walk lets through (floats in their shortest round-tripping form, ``1e-7`` where
    ``json`` writes ``1e-07``), in a fraction of the time — this runs for every enqueue and
    every settled result."""
    return pydantic_to_json(value).decode()


def to_json(value: Any, *, what: str) -> JsonValue:
    """``value`` as plain JSON data every driver stores, or a refusal naming the first bad
    field: ``X_PAYLOAD_NOT_JSON``, ``X_TEXT_NOT_STORABLE`` or ``X_PAYLOAD_TOO_DEEP``."""
    try:
        return _walk(value, set(), 0)
    except _Refused as bad:
        raise bad.error(_path(what, bad.path)) from None


def to_json_text(value: Any, *, what: str, max_bytes: int) -> tuple[JsonValue, str]:
    """``to_json(value)`` and its JSON text, serialised once; ``X_PAYLOAD_TOO_LARGE`` when
    the text is over ``max_bytes`` bytes of UTF-8."""
    data = to_json(value, what=what)
    text = json_text(data)
    size = len(text) if text.isascii() else len(text.encode("utf-8"))
    if size > max_bytes:
        raise _too_large(what, data, size, max_bytes)
    return data, text


class _Refused(Exception):
    """Raised at the offending value; each level it unwinds through adds its part of the
    path, so a valid payload — the hot path of every enqueue — never builds one."""

    def __init__(self, code: str, problem: str, value: object) -> None:
        super().__init__(problem)
        self.code = code
        self.problem = problem
        self.value = value
        self.path: list[str] = []

    def error(self, where: str) -> FerryError:
        if self.code == "X_TEXT_NOT_STORABLE":
            return not_storable(where, self.problem)
        if self.code == "X_PAYLOAD_TOO_DEEP":
            return FerryError(
                self.code,
                f"{where} {self.problem}",
                "flatten the value: store nested records in your own tables and pass their "
                "ids — a payload is a pointer, not a record",
            )
        return FerryError(
            self.code,
            f"{where} {self.problem}",
            "store only JSON values (str, int, finite float, bool, None, lists, dicts with str "
            "keys) — a payload is a pointer to your own rows, not a record"
            if not isinstance(self.value, bytes | bytearray | memoryview)
            else "store an id that points at the bytes in your own storage, or base64-encode "
            "them into a str field",
        )


def _walk(value: Any, seen: set[int], depth: int) -> JsonValue:
    # Exact types first, cheapest test first: this runs once per value of every enqueue.
    kind = type(value)
    if kind is str:
        if "\x00" in value or not value.isascii():
            _check_text(value)
        return value
    if kind is int:
        if value.bit_length() > _MAX_INT_BITS:
            raise _huge(value)
        return value
    if value is None or kind is bool:
        return value
    if kind is float:
        return _float(value)
    if kind is dict:
        return _walk_items(value, value.items(), seen, depth)
    if kind is list:
        return _walk_list(value, seen, depth)
    if isinstance(value, BaseModel):
        return _walk_items(value, value.__dict__.items(), seen, depth)
    return _walk_other(value, seen, depth)


def _walk_other(value: Any, seen: set[int], depth: int) -> JsonValue:
    """Subclasses of the JSON types and the scalars with one canonical JSON form."""
    if isinstance(value, str):  # a StrEnum or a (str, Enum) member: its text, not its name
        _check_text(value)
        return str.__str__(value)
    if isinstance(value, int):
        return _walk(int(value), seen, depth)
    if isinstance(value, float):
        return _float(float(value))
    if isinstance(value, Enum):
        return _walk(value.value, seen, depth)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise _not_representable(value)
        return str(value)
    if isinstance(value, _CANONICAL_SCALARS):
        return to_jsonable_python(value)
    if isinstance(value, bytes | bytearray | memoryview):
        raise _Refused("X_PAYLOAD_NOT_JSON", "is bytes", value)
    if isinstance(value, set | frozenset):
        raise _Refused("X_PAYLOAD_NOT_JSON", "is a set", value)
    if isinstance(value, Mapping):
        return _walk_items(value, value.items(), seen, depth)
    if isinstance(value, list | tuple):
        return _walk_list(value, seen, depth)
    raise _Refused(
        "X_PAYLOAD_NOT_JSON", f"is a {type(value).__name__}, which has no JSON form", value
    )


def _float(value: float) -> JsonValue:
    if not math.isfinite(value):
        raise _not_representable(value)
    return int(value) if abs(value) >= _EXACT_FLOAT_LIMIT else value


def _enter(container: object, seen: set[int], depth: int) -> None:
    """Refuse a container seen on the way down (a cycle) or one level too deep."""
    if id(container) in seen:
        raise _Refused(
            "X_PAYLOAD_NOT_JSON", "refers back to itself (a circular structure)", container
        )
    if depth >= MAX_DEPTH:
        raise _Refused(
            "X_PAYLOAD_TOO_DEEP",
            f"nests deeper than {MAX_DEPTH} levels of lists and dicts",
            container,
        )
    seen.add(id(container))


def _walk_list(value: list[Any] | tuple[Any, ...], seen: set[int], depth: int) -> JsonValue:
    _enter(value, seen, depth)
    items: list[JsonValue] = []
    for index, item in enumerate(value):
        try:
            items.append(_walk(item, seen, depth + 1))
        except _Refused as bad:
            bad.path.append(f"[{index}]")
            raise
    seen.discard(id(value))
    return items


def _walk_items(
    container: object, items: Iterable[tuple[str, Any]], seen: set[int], depth: int
) -> dict[str, JsonValue]:
    _enter(container, seen, depth)
    out: dict[str, JsonValue] = {}
    for key, item in items:
        try:
            if type(key) is not str:
                if not isinstance(key, str):
                    raise _Refused("X_PAYLOAD_NOT_JSON", "is a key that is not a string", key)
                key = str.__str__(key)  # a StrEnum member, say: its text is the key
            if "\x00" in key or not key.isascii():
                _check_text(key, is_key=True)
            out[key] = _walk(item, seen, depth + 1)
        except _Refused as bad:
            bad.path.append(_key_part(key))
            raise
    seen.discard(id(container))
    return out


def _not_representable(value: object) -> _Refused:
    return _Refused("X_PAYLOAD_NOT_JSON", f"is {value!r}, which JSON cannot represent", value)


def _check_text(text: str, *, is_key: bool = False) -> None:
    problem = unstorable(text)
    if problem is not None:
        raise _Refused(
            "X_TEXT_NOT_STORABLE", f"is a key that {problem}" if is_key else problem, text
        )


def _huge(value: int) -> _Refused:
    return _Refused(
        "X_PAYLOAD_NOT_JSON",
        f"is an integer of {value.bit_length():,} bits, more digits than can be written out "
        "and read back",
        value,
    )


def _key_part(key: object) -> str:
    """A dict key as part of a field path: ``.name``, or ``['odd key']`` (always storable)."""
    return f".{key}" if isinstance(key, str) and key.isidentifier() else f"[{quoted(key)}]"


def _path(what: str, reversed_parts: list[str]) -> str:
    """``what`` and the path into it, the middle left out when it is very long."""
    parts = list(reversed(reversed_parts))
    if len(parts) > _SHOWN_PATH_PARTS:
        half = _SHOWN_PATH_PARTS // 2
        parts = [*parts[:half], f"…({len(parts) - 2 * half} more)…", *parts[-half:]]
    return what + "".join(parts)


def _too_large(what: str, data: JsonValue, size: int, max_bytes: int) -> FerryError:
    largest = ""
    if isinstance(data, dict) and data:
        sizes = {key: len(json_text(item).encode("utf-8")) for key, item in data.items()}
        key = max(sizes, key=sizes.__getitem__)
        largest = f"; its largest field is {what}{_key_part(key)} ({sizes[key]:,} bytes)"
    return FerryError(
        "X_PAYLOAD_TOO_LARGE",
        f"{what} is {size:,} bytes of JSON, over the driver's limit of {max_bytes:,}{largest}",
        "keep the payload a pointer: store the data in your own table and enqueue its id "
        "(or raise max_payload_bytes= where the driver is built)",
    )
