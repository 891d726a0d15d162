"""A body's own verdict on a failed attempt: retry at a named time, or not at all.

Raising either is still a failed attempt (the error's code is the run's last error); it
only changes what ``execute_job`` does next. Both are ``FerryError``s, so a body that
raises one anywhere else still reads as a coded refusal.
"""

from __future__ import annotations

from ferry.errors import FerryError


class RetryAfter(FerryError):
    """Fail this attempt and offer the run again ``delay_ms`` from now (e.g. a 429's
    ``Retry-After``) instead of after the declared backoff; dead when no attempts remain."""

    def __init__(self, code: str, message: str, fix: str, *, delay_ms: int) -> None:
        super().__init__(code, message, fix)
        self.delay_ms = max(int(delay_ms), 0)


class NoRetry(FerryError):
    """Fail this attempt and the run with it: no retry could change the answer."""
