"""What may be stored: JSON, exactly, checked before anything reaches a queue.

Pydantic would happily turn a ``set`` into a list or ``bytes`` into a string on the way
to JSON; a payload that changes shape in storage is a bug that surfaces days later in a
retry. So a value is walked as it is and refused, with the path of the offending field,
unless it has one obvious JSON form. Scalars with a canonical string form (UUID, dates,
``Decimal``, enums) are written in that form; the input schema reads them back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
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
    return _walk(value, what, set())


def _walk(value: Any, path: str, seen: set[int]) -> JsonValue:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _refuse(path, f"is {value!r}, which JSON cannot represent", value)
        return value
    if isinstance(value, Enum):
        return _walk(value.value, path, seen)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise _refuse(path, f"is {value!r}, which JSON cannot represent", value)
        return str(value)
    if isinstance(value, _CANONICAL_SCALARS):
        return to_jsonable_python(value)
    if isinstance(value, bytes | bytearray | memoryview):
        raise _refuse(path, "is bytes", value)
    if isinstance(value, set | frozenset):
        raise _refuse(path, "is a set", value)
    if id(value) in seen:
        raise _refuse(path, "refers back to itself (a circular structure)", value)
    if isinstance(value, BaseModel):
        seen.add(id(value))
        out = {
            name: _walk(getattr(value, name), f"{path}.{name}", seen)
            for name in type(value).model_fields
        }
        seen.discard(id(value))
        return out
    if isinstance(value, Mapping):
        seen.add(id(value))
        result: dict[str, JsonValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _refuse(f"{path}[{key!r}]", "has a key that is not a string", key)
            result[key] = _walk(item, f"{path}.{key}", seen)
        seen.discard(id(value))
        return result
    if isinstance(value, list | tuple):
        seen.add(id(value))
        items = [_walk(item, f"{path}[{index}]", seen) for index, item in enumerate(value)]
        seen.discard(id(value))
        return items
    raise _refuse(path, f"is a {type(value).__name__}, which has no JSON form", value)


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
