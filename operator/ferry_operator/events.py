"""Events on DurableJobs and ScheduledTasks: what ``kubectl describe`` and ``kubectl events`` show.

Posted on a verdict's change only (the stored conditions are the memory, so an operator restart
or a leader handover posts nothing twice): ``Normal`` while a resource is fine or on its way,
``Warning`` when it is stalled until someone acts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from kubernetes_asyncio import client

from ferry._clock import Clock
from ferry_operator.conditions import stamp
from ferry_operator.names import FIELD_MANAGER
from ferry_operator.pods import Manifest

PostEvent = Callable[[Mapping[str, Any], str, str, str], Awaitable[None]]
"""Posts an event on a resource: ``(body, type, reason, message)``."""


def event_manifest(
    body: Mapping[str, Any], event_type: str, reason: str, message: str, *, now: str, instance: str
) -> Manifest:
    """A core/v1 Event about ``body`` from this operator replica."""
    meta = body["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
        "involvedObject": {
            "apiVersion": body["apiVersion"],
            "kind": body["kind"],
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
            "resourceVersion": meta.get("resourceVersion"),
        },
        "type": event_type,
        "reason": reason,
        "message": message,
        "source": {"component": FIELD_MANAGER},
        "reportingComponent": FIELD_MANAGER,
        "reportingInstance": instance,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }


class EventRecorder:
    """Posts events as one operator replica (named in ``reportingInstance``)."""

    def __init__(self, api: client.ApiClient, instance: str, clock: Clock) -> None:
        self._core = client.CoreV1Api(api)
        self._instance = instance
        self._clock = clock

    async def post(
        self, body: Mapping[str, Any], event_type: str, reason: str, message: str
    ) -> None:
        """Post one event (directly, not with kopf.event: the periodic refresh reconciles
        outside any Kopf handler's task, where Kopf's helpers do not work)."""
        event = event_manifest(
            body,
            event_type,
            reason,
            message,
            now=stamp(self._clock.now_ms()),
            instance=self._instance,
        )
        # The client sends a plain dict as it is.
        await self._core.create_namespaced_event(
            body["metadata"]["namespace"], cast(client.CoreV1Event, event)
        )
