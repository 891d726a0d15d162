"""JSON containment, as PostgreSQL's ``jsonb @>`` defines it, for the stores that have none.

PostgreSQL answers ``payload @> pattern`` itself; the SQLite driver registers ``contains``
as a SQL function, and the shared introspection store applies it to the runs the Redis
listing script answers with their input (Lua's cjson reads ``[]`` and ``{}`` alike and
numbers as doubles), so an input search finds the same runs on every driver
(``tests/conformance/test_search.py`` holds them to it):

* an object contains another when every key of the pattern is present and its value
  contains the pattern's value for that key;
* an array contains another when every element of the pattern is contained in some element
  of the array (order and repeats do not matter); a top-level array also contains a bare
  scalar that is one of its elements;
* scalars contain only an equal scalar (numbers by value: ``1`` and ``1.0`` are equal;
  ``true`` is not ``1``).
"""

from __future__ import annotations

import json
from typing import Any


def contains(container: Any, pattern: Any, *, top: bool = True) -> bool:
    """Whether ``container`` contains ``pattern`` (decoded JSON values)."""
    if isinstance(pattern, dict):
        return isinstance(container, dict) and all(
            key in container and contains(container[key], value, top=False)
            for key, value in pattern.items()
        )
    if isinstance(pattern, list):
        return isinstance(container, list) and all(
            any(contains(element, wanted, top=False) for element in container) for wanted in pattern
        )
    if isinstance(container, list):  # only a top-level array holds a bare scalar
        return top and any(_same_scalar(element, pattern) for element in container)
    return _same_scalar(container, pattern)


def _same_scalar(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def contains_text(document: str | None, pattern: str | None) -> int:
    """``contains`` over JSON texts, as a SQL function answers (1 or 0; a missing one: 0)."""
    if document is None or pattern is None:
        return 0
    return int(contains(json.loads(document), json.loads(pattern)))
