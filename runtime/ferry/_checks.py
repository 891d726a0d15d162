"""Checks declarations share, each refusing with ``X_INVARIANT`` where it is written."""

from __future__ import annotations

from ferry.errors import FerryError


def require_count(value: object, *, what: str, fix: str) -> None:
    """Refuse ``value`` unless it is a whole number of at least 1 (``True`` is not one).

    ``what`` names the setting with ``{}`` where the value goes: ``"Retry(attempts={})"``.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise FerryError(
            "X_INVARIANT",
            f"{what.format(repr(value))} must be a whole number of at least 1",
            fix,
        )
