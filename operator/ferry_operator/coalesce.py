"""Per-namespace coalescing: one reconcile at a time, and one more for whatever came meanwhile.

A Deployment rollout emits a burst of events; reconciling once per event would redo the same
work dozens of times. A request arriving while its namespace's reconcile runs marks it dirty
and returns; the running reconcile goes round once more, so the last event is never missed.

It also remembers which namespaces hold ferry resources (the periodic refresh visits those,
and forgets a namespace once it holds none), and keeps the expected refusals quiet: a namespace
being deleted refuses every create, and a namespace outside the operator's RBAC refuses
everything — one log line each, never a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from kubernetes_asyncio.client.exceptions import ApiException

from ferry_operator.kube import namespace_going, refusal

logger = logging.getLogger("ferry_operator")


class Coalescer:
    """Runs ``reconcile(namespace)`` serially per namespace, folding concurrent requests.

    ``reconcile`` answers whether the namespace still holds ferry resources.
    """

    def __init__(self, reconcile: Callable[[str], Awaitable[bool]]) -> None:
        self._reconcile = reconcile
        self._running: set[str] = set()
        self._dirty: set[str] = set()
        self._known: set[str] = set()
        self._going: set[str] = set()

    def known(self) -> list[str]:
        """Every namespace holding ferry resources at its last reconcile."""
        return sorted(self._known)

    async def request(self, namespace: str) -> None:
        """Reconcile ``namespace`` now, or after the reconcile already running there."""
        if namespace in self._running:
            self._dirty.add(namespace)
            return
        self._running.add(namespace)
        try:
            while True:
                self._dirty.discard(namespace)
                await self._round(namespace)
                if namespace not in self._dirty:
                    return
        finally:
            self._running.discard(namespace)

    async def _round(self, namespace: str) -> None:
        try:
            holds = await self._reconcile(namespace)
        except Exception as failed:
            self._failed(namespace, failed)
            return
        if holds:
            self._known.add(namespace)
        else:
            self._known.discard(namespace)
            self._going.discard(namespace)

    def _failed(self, namespace: str, failed: Exception) -> None:
        if isinstance(failed, ApiException) and namespace_going(failed):
            # Its content goes with it; the reconcile after the last deletion finds it empty
            # and forgets it, and this mark.
            if namespace not in self._going:
                self._going.add(namespace)
                logger.info("namespace %s is being deleted: leaving it be", namespace)
            self._known.discard(namespace)
            return
        if isinstance(failed, ApiException) and failed.status == 403:
            logger.warning("namespace %s refused the reconcile: %s", namespace, refusal(failed))
        else:
            logger.error("reconciling namespace %s failed", namespace, exc_info=failed)
        # The periodic refresh retries: one failure must not stop the namespace from ever
        # being reconciled again.
        self._known.add(namespace)
