"""The names ferry keys rows by — queues, jobs, tasks, actors — and the one rule they keep.

A name is a durable key: a paused queue, a scheduled task's last tick and every queued run
are found by it, so ``""`` (a queue nobody can address), a name with invisible surrounding
spaces, or one a driver cannot store is refused where it is written, with the same words
wherever a name is taken.
"""

from __future__ import annotations

from ferry._storable import not_storable, quoted, unstorable
from ferry.errors import FerryError

MAX_NAME_CHARS = 200


def check_name(value: object, *, what: str, fix: str | None = None) -> str:
    """``value`` if it is a usable name; ``what`` says whose (e.g. ``'job queue'``).

    Refuses ``X_INVARIANT`` for a non-string, empty, space-padded or over-long name and
    ``X_TEXT_NOT_STORABLE`` for one holding a NUL character or a lone surrogate.
    """
    if not isinstance(value, str) or not value or len(value) > MAX_NAME_CHARS:
        raise FerryError(
            "X_INVARIANT",
            f"{what} {quoted(value)} is not a name: it must be a non-empty string of at most "
            f"{MAX_NAME_CHARS} characters",
            fix or f"give the {what} a short name such as 'default' or 'emails'",
        )
    if value != value.strip():
        raise FerryError(
            "X_INVARIANT",
            f"{what} {quoted(value)} has spaces around it, which no one reading it would see",
            fix or f"write the {what} as {value.strip()!r}",
        )
    problem = unstorable(value)
    if problem is not None:
        raise not_storable(f"{what} {quoted(value)}", problem)
    return value
