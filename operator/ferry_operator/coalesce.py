"""Per-namespace coalescing: one reconcile at a time, and one more for whatever came meanwhile.

A Deployment rollout emits a burst of events; reconciling once per event would redo the same
work dozens of times. A request arriving while its namespace's reconcile runs marks it dirty
and returns; the running reconcile goes round once more, so the last event is never missed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

logger = logging.getLogger("ferry_operator")


class Coalescer:
    """Runs ``reconcile(namespace)`` serially per namespace, folding concurrent requests."""

    def __init__(self, reconcile: Callable[[str], Awaitable[None]]) -> None:
        self._reconcile = reconcile
        self._running: set[str] = set()
        self._dirty: set[str] = set()
        self._known: set[str] = set()

    def known(self) -> list[str]:
        """Every namespace a request has named."""
        return sorted(self._known)

    async def request(self, namespace: str) -> None:
        """Reconcile ``namespace`` now, or after the reconcile already running there."""
        self._known.add(namespace)
        if namespace in self._running:
            self._dirty.add(namespace)
            return
        self._running.add(namespace)
        try:
            while True:
                self._dirty.discard(namespace)
                try:
                    await self._reconcile(namespace)
                except Exception:
                    # The next event or the periodic refresh retries; one failure must not
                    # stop the namespace from ever being reconciled again.
                    logger.exception("reconciling namespace %s failed", namespace)
                if namespace not in self._dirty:
                    return
        finally:
            self._running.discard(namespace)
