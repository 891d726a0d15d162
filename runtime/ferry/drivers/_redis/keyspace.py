"""The key prefix: every key and channel of one driver, and why all share a hash tag."""

from __future__ import annotations

import re

from ferry.errors import FerryError

_PREFIX = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def checked_prefix(prefix: str) -> str:
    """``prefix`` if it is a plain name ferry can put in braces (a hash tag)."""
    if not isinstance(prefix, str) or not _PREFIX.match(prefix):
        raise FerryError(
            "X_INVARIANT",
            f"redis key prefix {prefix!r} is not a plain name of 1 to 64 letters, digits, "
            '".", "_" or "-"',
            'use a prefix such as prefix="ferry" or prefix="ferry-staging"',
        )
    return prefix


class Keyspace:
    """Names under ``{prefix}``: the braces are a hash tag, so on Redis Cluster every key of
    a prefix maps to one hash slot — which a script touching many keys at once requires.
    The Lua side builds the same names (``lua/lib.lua``)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = checked_prefix(prefix)
        self.tag = "{" + self.prefix + "}"

    def __call__(self, *parts: str) -> str:
        """``{prefix}:part:part…``; only the last part may be caller-supplied text."""
        return ":".join((self.tag, *parts))

    @property
    def runs_channel(self) -> str:
        """The pub/sub channel a due run is announced on (its queue is the message)."""
        return self("wake")

    @property
    def outbox_channel(self) -> str:
        """The pub/sub channel an appended outbox entry is announced on."""
        return self("outbox", "wake")


def run_id(job_id: str) -> str | None:
    """``job_id`` if it can name a run (runs are numbered 1, 2, …), else None: no run has
    it, and it never reaches a key name or a script's arithmetic."""
    if job_id.isascii() and job_id.isdigit() and not job_id.startswith("0"):
        return job_id
    return None
