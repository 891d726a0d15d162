"""The operator's few Kubernetes calls: server-side apply, guarded delete, reads, status.

Server-side apply with ``force`` is what makes reconciling level-based: applying the same
manifest twice changes nothing, and a field someone edited by hand is taken back.

Owned objects are addressed by one path table and read as ``PartialObjectMetadata``: whether
an object exists and who owns it is all the operator asks, so a Secret's value never reaches it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, cast

from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException
from kubernetes_asyncio.config.config_exception import ConfigException

from ferry_operator.names import (
    API_VERSION,
    FIELD_MANAGER,
    GROUP,
    MANAGED_BY,
    OWNED_SELECTOR,
    VERSION,
)
from ferry_operator.pods import Manifest

_APPLY = "application/apply-patch+yaml"
_METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
# The stubs omit ``_content_type``, which the generated client accepts on every call.
_MERGE_PATCH: dict[str, Any] = {"_content_type": "application/merge-patch+json"}
_PATHS = {
    "Deployment": "/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
    "Service": "/api/v1/namespaces/{namespace}/services/{name}",
    "ConfigMap": "/api/v1/namespaces/{namespace}/configmaps/{name}",
    "PodDisruptionBudget": "/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/{name}",
    "Secret": "/api/v1/namespaces/{namespace}/secrets/{name}",
}


async def connect() -> client.ApiClient:
    """A client from the pod's service account, or from the kubeconfig outside a cluster."""
    try:
        config.load_incluster_config()  # type: ignore[no-untyped-call]  # untyped upstream
    except ConfigException:
        # The library reads $KUBECONFIG once, at import; read it at connect time instead.
        await config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))
    return client.ApiClient()


async def call(
    api: client.ApiClient,
    method: str,
    path: str,
    *,
    params: Mapping[str, str] | None = None,
    body: Any = None,
    query: list[tuple[str, str]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Manifest:
    """One API call answered as a plain dict (the generated models are not needed here)."""
    answer = await api.call_api(
        path,
        method,
        path_params=dict(params or {}),
        query_params=query or [],
        header_params={"Accept": "application/json", **(headers or {})},
        body=body,
        response_types_map={200: "object", 201: "object"},
        auth_settings=["BearerToken"],
        _return_http_data_only=True,
    )
    return cast(Manifest, answer)


def operator_owned(metadata: Mapping[str, Any]) -> bool:
    """Whether the operator wrote this object: its label, and a ferry resource among its owners.

    Both, because a label is easy to copy by hand and an owner reference alone could be any
    controller's; the operator deletes or overwrites nothing that lacks either.
    """
    labels = metadata.get("labels") or {}
    owners = metadata.get("ownerReferences") or []
    return labels.get(MANAGED_BY) == FIELD_MANAGER and any(
        owner.get("apiVersion") == API_VERSION for owner in owners
    )


def namespace_going(failed: ApiException) -> bool:
    """Whether a refusal only says the namespace is being deleted (a create there is
    forbidden) or is gone already (whatever was listed in it a moment ago)."""
    if failed.status not in (403, 404):
        return False
    try:
        details = json.loads(failed.body or "{}").get("details") or {}
    except ValueError:
        return False
    if failed.status == 404:
        return details.get("kind") == "namespaces"
    return any(c.get("reason") == "NamespaceTerminating" for c in details.get("causes") or [])


def refusal(failed: ApiException) -> str:
    """The API server's one-line reason for refusing a call."""
    try:
        return str(json.loads(failed.body or "{}").get("message") or failed.reason)
    except ValueError:
        return str(failed.reason)


class Kube:
    """The calls the handlers make, over one ``ApiClient``."""

    def __init__(self, api: client.ApiClient) -> None:
        self._api = api
        self._custom = client.CustomObjectsApi(api)

    @property
    def api(self) -> client.ApiClient:
        """The client underneath, for the calls that are not about owned objects."""
        return self._api

    async def close(self) -> None:
        """Release the client's connections."""
        await self._api.close()

    async def _call(
        self,
        method: str,
        kind: str,
        namespace: str,
        name: str,
        *,
        body: Any = None,
        query: list[tuple[str, str]] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Manifest:
        params = {"namespace": namespace, "name": name}
        return await call(
            self._api, method, _PATHS[kind], params=params, body=body, query=query, headers=headers
        )

    async def apply(self, manifest: Manifest) -> Manifest:
        """Server-side apply an owned object as the operator's field manager; the result."""
        meta = manifest["metadata"]
        return await self._call(
            "PATCH",
            manifest["kind"],
            meta["namespace"],
            meta["name"],
            body=manifest,
            query=[("fieldManager", FIELD_MANAGER), ("force", "true")],
            headers={"Content-Type": _APPLY},
        )

    async def read(self, kind: str, namespace: str, name: str) -> Manifest | None:
        """An object as a plain dict, or ``None``."""
        try:
            return await self._call("GET", kind, namespace, name)
        except ApiException as failed:
            if failed.status == 404:
                return None
            raise

    async def metadata(self, kind: str, namespace: str, name: str) -> Manifest | None:
        """An object's metadata only (for a Secret: never its data), or ``None``."""
        try:
            found = await self._call(
                "GET", kind, namespace, name, headers={"Accept": _METADATA_ONLY}
            )
        except ApiException as failed:
            if failed.status == 404:
                return None
            raise
        return cast(Manifest, found["metadata"])

    async def delete_owned(self, kind: str, namespace: str, name: str) -> None:
        """Delete an object only if the operator owns it (``operator_owned``), and only the
        very object judged: the delete carries its UID as a precondition."""
        meta = await self.metadata(kind, namespace, name)
        if meta is None or not operator_owned(meta):
            return
        try:
            await self._call(
                "DELETE", kind, namespace, name, body={"preconditions": {"uid": meta["uid"]}}
            )
        except ApiException as failed:
            # 404: gone meanwhile; 409: replaced meanwhile by another object of that name.
            if failed.status not in (404, 409):
                raise

    async def list_resources(self, plural: str, namespace: str) -> list[Manifest]:
        """Every ferry custom resource of ``plural`` in ``namespace``."""
        listed = await self._custom.list_namespaced_custom_object(GROUP, VERSION, namespace, plural)
        return cast(list[Manifest], listed["items"])

    async def owned_pods(
        self, namespace: str, selector: Mapping[str, str] | None = None
    ) -> list[Manifest]:
        """The pods of the Deployments the operator wrote in ``namespace`` (those carrying
        ``selector`` too), label-selected by the server: their status says why they do not
        run, and where a scheduler serves its metrics."""
        labels = ",".join([OWNED_SELECTOR, *(f"{k}={v}" for k, v in (selector or {}).items())])
        listed = await call(
            self._api,
            "GET",
            "/api/v1/namespaces/{namespace}/pods",
            params={"namespace": namespace},
            query=[("labelSelector", labels)],
        )
        return cast(list[Manifest], listed["items"])

    async def patch_status(self, plural: str, namespace: str, name: str, status: Manifest) -> None:
        """Merge ``status`` into a resource's status subresource; a deleted one is skipped."""
        try:
            await self._custom.patch_namespaced_custom_object_status(
                GROUP, VERSION, namespace, plural, name, {"status": status}, **_MERGE_PATCH
            )
        except ApiException as failed:
            if failed.status != 404:
                raise
