"""Checks declarations share, each refusing where it is written."""

from __future__ import annotations

from ferry._bounds import INT32_MAX, shown
from ferry.errors import FerryError


def require_count(value: object, *, what: str, fix: str) -> None:
    """Refuse ``value`` unless it is a whole number of at least 1 (``True`` is not one),
    ``X_INVARIANT``, and at most ``INT32_MAX`` (the ``integer`` column every count is
    kept in), ``X_OUT_OF_RANGE``.

    ``what`` names the setting with ``{}`` where the value goes: ``"Retry(attempts={})"``.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise FerryError(
            "X_INVARIANT",
            f"{what.format(repr(value) if isinstance(value, str | float) else value)} "
            "must be a whole number of at least 1",
            fix,
        )
    if value > INT32_MAX:
        raise FerryError(
            "X_OUT_OF_RANGE",
            f"{what.format(shown(value))} is over {INT32_MAX}, the largest count ferry stores",
            fix,
        )
