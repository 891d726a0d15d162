"""How often one address may present a wrong token before it is answered 429 for a while.

The dashboard's sign-in form, its bearer-token requests and the MCP tools over HTTP each
count the failures of the address they were reached from — the TCP peer, or behind a
proxy named with ``--trust-proxy`` the client that proxy reports (the server rewrites the
peer before the app sees it; a header from anyone else is never read).

Tokens are long random strings, so the throttle is not what keeps them secret: it keeps a
guessing script from filling the log and the database round trips, and every failure is a
log line an operator can alert on. The count lives in this process: with several replicas
behind a balancer an address gets ``max_failures`` per replica and window, which still
bounds a guesser to a handful of tries a minute.
"""

from __future__ import annotations

import logging
from collections import OrderedDict, deque

from ferry._clock import Clock

logger = logging.getLogger("ferry.admin")

MAX_FAILURES = 5
WINDOW_MS = 5 * 60_000
MAX_TRACKED = 10_000
"""Addresses remembered at once; the oldest is forgotten first, so memory stays bounded."""


class TokenThrottle:
    """Failed token checks per client address over a sliding window."""

    def __init__(
        self,
        clock: Clock,
        *,
        max_failures: int = MAX_FAILURES,
        window_ms: int = WINDOW_MS,
        max_tracked: int = MAX_TRACKED,
    ) -> None:
        self._clock = clock
        self._max_failures = max_failures
        self._window_ms = window_ms
        self._max_tracked = max_tracked
        self._failures: OrderedDict[str, deque[int]] = OrderedDict()

    def retry_after_s(self, address: str) -> int:
        """Seconds until ``address`` may try again (0: it may now)."""
        recent = self._recent(address)
        if len(recent) < self._max_failures:
            return 0
        return max(1, -(-(recent[0] + self._window_ms - self._clock.now_ms()) // 1000))

    def failed(self, address: str, *, event: str) -> None:
        """Count one failure and log it as ``<event>.failed`` (``admin.signin``,
        ``admin.bearer``, ``mcp.bearer``); the one that starts the wait also as
        ``<event>.throttled``."""
        recent = self._recent(address)
        recent.append(self._clock.now_ms())
        self._failures[address] = recent
        self._failures.move_to_end(address)
        while len(self._failures) > self._max_tracked:
            self._failures.popitem(last=False)
        logger.warning(
            f"{event}.failed",
            extra={"client": address, "failures": len(recent), "window_s": self._window_ms // 1000},
        )
        if len(recent) == self._max_failures:
            logger.warning(
                f"{event}.throttled",
                extra={"client": address, "retry_after_s": self.retry_after_s(address)},
            )

    def succeeded(self, address: str) -> None:
        """A valid token clears the address's count."""
        self._failures.pop(address, None)

    def _recent(self, address: str) -> deque[int]:
        horizon = self._clock.now_ms() - self._window_ms
        recent = self._failures.get(address, deque())
        while recent and recent[0] <= horizon:
            recent.popleft()
        return recent
