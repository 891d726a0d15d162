"""What may be stored: JSON, exactly, checked before anything reaches a queue.

Pydantic would happily turn a ``set`` into a list or ``bytes`` into a string on the way
to JSON; a payload that changes shape in storage is a bug that surfaces days later in a
retry. So a value is walked as it is and refused, with the path of the offending field,
unless it has one obvious JSON form. Scalars with a canonical string form (UUID, dates,
``Decimal``, enums) are written in that form; the input schema reads them back.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum
from typing import Any
from uuid import UUID

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from ferry.drivers.protocol import JsonValue
from ferry.errors import FerryError

_CANONICAL_SCALARS = (UUID, datetime, date, time, timedelta)


def to_json(value: Any, *, what: str) -> JsonValue:
    """``value`` as plain JSON data, or ``X_PAYLOAD_NOT_JSON`` naming the first bad field."""
    try:
        return _walk(value, set())
    except _NotJson as bad:
        raise _refuse(what + "".join(reversed(bad.path)), bad.problem, bad.value) from None


class _NotJson(Exception):
    """Raised at the offending value; each level it unwinds through adds its part of the
    path, so a valid payload — the hot path of every enqueue — never builds one."""

    def __init__(self, problem: str, value: object) -> None:
        super().__init__(problem)
        self.problem = problem
        self.value = value
        self.path: list[str] = []


def _walk(value: Any, seen: set[int]) -> JsonValue:
    kind = type(value)
    if value is None or kind is str or kind is bool or kind is int:
        return value
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _NotJson(f"is {value!r}, which JSON cannot represent", value)
        return value
    if isinstance(value, Enum):
        return _walk(value.value, seen)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise _NotJson(f"is {value!r}, which JSON cannot represent", value)
        return str(value)
    if isinstance(value, _CANONICAL_SCALARS):
        return to_jsonable_python(value)
    if isinstance(value, bytes | bytearray | memoryview):
        raise _NotJson("is bytes", value)
    if isinstance(value, set | frozenset):
        raise _NotJson("is a set", value)
    if id(value) in seen:
        raise _NotJson("refers back to itself (a circular structure)", value)
    if isinstance(value, BaseModel):
        return _walk_items(
            value, ((name, getattr(value, name)) for name in type(value).model_fields), seen
        )
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                bad = _NotJson("has a key that is not a string", key)
                bad.path.append(f"[{key!r}]")
                raise bad
        return _walk_items(value, value.items(), seen)
    if isinstance(value, list | tuple):
        seen.add(id(value))
        items: list[JsonValue] = []
        for index, item in enumerate(value):
            try:
                items.append(_walk(item, seen))
            except _NotJson as bad:
                bad.path.append(f"[{index}]")
                raise
        seen.discard(id(value))
        return items
    raise _NotJson(f"is a {type(value).__name__}, which has no JSON form", value)


def _walk_items(
    container: object, items: Iterable[tuple[str, Any]], seen: set[int]
) -> dict[str, JsonValue]:
    seen.add(id(container))
    out: dict[str, JsonValue] = {}
    for key, item in items:
        try:
            out[key] = _walk(item, seen)
        except _NotJson as bad:
            bad.path.append(f".{key}")
            raise
    seen.discard(id(container))
    return out


def _refuse(path: str, problem: str, value: object) -> FerryError:
    return FerryError(
        "X_PAYLOAD_NOT_JSON",
        f"{path} {problem}",
        "store only JSON values (str, int, finite float, bool, None, lists, dicts with str "
        "keys) — a payload is a pointer to your own rows, not a record"
        if not isinstance(value, bytes | bytearray | memoryview)
        else "store an id that points at the bytes in your own storage, or base64-encode "
        "them into a str field",
    )
