"""The operator's few Kubernetes calls: server-side apply, list, read, delete, status.

Server-side apply with ``force`` is what makes reconciling level-based: applying the same
manifest twice changes nothing, and a field someone edited by hand is taken back.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any, cast

from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException
from kubernetes_asyncio.config.config_exception import ConfigException

from ferry_operator.names import FIELD_MANAGER, GROUP, VERSION
from ferry_operator.pods import Manifest

_APPLY = "application/apply-patch+yaml"
# The stubs omit ``_content_type``, which the generated client accepts on every call.
_MERGE_PATCH: dict[str, Any] = {"_content_type": "application/merge-patch+json"}


async def connect() -> client.ApiClient:
    """A client from the pod's service account, or from the kubeconfig outside a cluster."""
    try:
        config.load_incluster_config()  # type: ignore[no-untyped-call]  # untyped upstream
    except ConfigException:
        # The library reads $KUBECONFIG once, at import; read it at connect time instead.
        await config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))
    return client.ApiClient()


class Kube:
    """The calls the handlers make, over one ``ApiClient``."""

    def __init__(self, api: client.ApiClient) -> None:
        self._api = api
        self._apps = client.AppsV1Api(api)
        self._core = client.CoreV1Api(api)
        self._policy = client.PolicyV1Api(api)
        self._custom = client.CustomObjectsApi(api)

    async def close(self) -> None:
        """Release the client's connections."""
        await self._api.close()

    async def apply(self, manifest: Manifest) -> None:
        """Server-side apply an owned object as the operator's field manager."""
        meta = manifest["metadata"]
        kwargs: dict[str, Any] = {
            "field_manager": FIELD_MANAGER,
            "force": True,
            "_content_type": _APPLY,
        }
        patch = {
            "Deployment": self._apps.patch_namespaced_deployment,
            "ConfigMap": self._core.patch_namespaced_config_map,
            "Service": self._core.patch_namespaced_service,
            "PodDisruptionBudget": self._policy.patch_namespaced_pod_disruption_budget,
        }[manifest["kind"]]
        await patch(meta["name"], meta["namespace"], manifest, **kwargs)

    async def delete(self, kind: str, namespace: str, name: str) -> None:
        """Delete an owned object; already gone is fine."""
        delete = {
            "Deployment": self._apps.delete_namespaced_deployment,
            "ConfigMap": self._core.delete_namespaced_config_map,
            "Service": self._core.delete_namespaced_service,
            "PodDisruptionBudget": self._policy.delete_namespaced_pod_disruption_budget,
        }[kind]
        try:
            await delete(name, namespace)
        except ApiException as failed:
            if failed.status != 404:
                raise

    async def warn(self, body: Manifest, reason: str, message: str) -> None:
        """Post a Warning event on a ferry resource (what ``kubectl describe`` shows)."""
        # Posted directly, not with kopf.warn: that only works inside a Kopf handler's task,
        # and the periodic refresh reconciles outside any.
        meta = body["metadata"]
        now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        event: Manifest = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
            "involvedObject": {
                "apiVersion": body["apiVersion"],
                "kind": body["kind"],
                "name": meta["name"],
                "namespace": meta["namespace"],
                "uid": meta["uid"],
            },
            "type": "Warning",
            "reason": reason,
            "message": message,
            "source": {"component": FIELD_MANAGER},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        # The client sends a plain dict as it is, like the patches above.
        await self._core.create_namespaced_event(meta["namespace"], cast(client.CoreV1Event, event))

    async def read_deployment(self, namespace: str, name: str) -> Manifest | None:
        """A Deployment as a plain dict, or ``None``."""
        try:
            found = await self._apps.read_namespaced_deployment(name, namespace)
        except ApiException as failed:
            if failed.status == 404:
                return None
            raise
        return cast(Manifest, self._api.sanitize_for_serialization(found))

    async def list_resources(self, plural: str, namespace: str) -> list[Manifest]:
        """Every ferry custom resource of ``plural`` in ``namespace``."""
        listed = await self._custom.list_namespaced_custom_object(GROUP, VERSION, namespace, plural)
        return cast(list[Manifest], listed["items"])

    async def get_resource(self, plural: str, namespace: str, name: str) -> Manifest | None:
        """One ferry custom resource, or ``None`` once it is gone."""
        try:
            found = await self._custom.get_namespaced_custom_object(
                GROUP, VERSION, namespace, plural, name
            )
        except ApiException as failed:
            if failed.status == 404:
                return None
            raise
        return cast(Manifest, found)

    async def patch_status(self, plural: str, namespace: str, name: str, status: Manifest) -> None:
        """Merge ``status`` into a resource's status subresource; a deleted one is skipped."""
        try:
            await self._custom.patch_namespaced_custom_object_status(
                GROUP, VERSION, namespace, plural, name, {"status": status}, **_MERGE_PATCH
            )
        except ApiException as failed:
            if failed.status != 404:
                raise
