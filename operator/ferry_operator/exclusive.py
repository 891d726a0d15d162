"""One cluster-wide ferry operator per cluster: a second release's refuses to lead.

Two operators reconciling one namespace fight: each takes back the other's writes (both apply
with force under one field manager), and both post every event. The chart refuses a second
cluster-wide install it can see at ``helm install`` time (a ``lookup`` of the first release's
ClusterRole); this is the runtime half, for what the chart cannot see — ``helm template`` piped
to ``kubectl apply`` or a GitOps tool rendering offline (no lookup runs), or two installs racing.

A cluster-wide operator lists every ferry operator's leader Lease (a label-selected list, so
it reads nothing else) and refuses if another release's Lease is alive — held and renewed
within its duration — and older than its own (creation time, then namespace and name, break
ties), so of two racing releases exactly one leads. A namespaced release's Lease counts too:
a cluster-wide operator would reconcile that release's namespaces a second time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubernetes_asyncio import client

from ferry.errors import FerryError
from ferry_operator.config import OperatorConfig
from ferry_operator.kube import call
from ferry_operator.leader import epoch_ms
from ferry_operator.names import LEASE_SELECTOR, WATCH_NAMESPACES_ANNOTATION
from ferry_operator.pods import Manifest


def _key(lease: Manifest) -> tuple[str, str]:
    return (lease["metadata"]["namespace"], lease["metadata"]["name"])


def _rank(lease: Manifest) -> tuple[int, str, str]:
    return (epoch_ms(lease["metadata"]["creationTimestamp"]), *_key(lease))


def alive(lease: Manifest, now_ms: int) -> bool:
    """Whether a Lease is held and was renewed within its duration."""
    spec: dict[str, Any] = lease.get("spec") or {}
    if not spec.get("holderIdentity") or not spec.get("renewTime"):
        return False
    return epoch_ms(spec["renewTime"]) + int(spec.get("leaseDurationSeconds") or 0) * 1000 > now_ms


def first_operator(
    leases: Sequence[Manifest], mine: tuple[str, str], now_ms: int
) -> Manifest | None:
    """Another release's live Lease that outranks this release's (or any live one, while this
    release has none yet): the operator that was there first. ``None``: lead."""
    own = next((lease for lease in leases if _key(lease) == mine), None)
    before = [
        lease
        for lease in leases
        if _key(lease) != mine
        and alive(lease, now_ms)
        and (own is None or _rank(lease) < _rank(own))
    ]
    return min(before, key=_rank, default=None)


def refusal(first: Manifest, config: OperatorConfig) -> FerryError:
    """The refusal naming the operator that was there first and how to keep just one."""
    namespace, name = _key(first)
    watched = (first["metadata"].get("annotations") or {}).get(WATCH_NAMESPACES_ANNOTATION, "*")
    scope = "every namespace" if watched == "*" else f"namespaces {watched}"
    return FerryError(
        "X_OPERATOR_CONFLICT",
        f'another ferry operator already leads (Lease "{namespace}/{name}", held by '
        f'"{first["spec"]["holderIdentity"]}", reconciling {scope}); this cluster-wide '
        f'operator (Lease "{config.release}") would reconcile those namespaces a second time',
        f"keep one release: helm uninstall the one in namespace {config.election.namespace}, "
        "or install it with watchNamespaces naming namespaces no other release watches",
    )


async def refuse_second_operator(
    api: client.ApiClient, config: OperatorConfig, now_ms: int
) -> None:
    """Raise ``X_OPERATOR_CONFLICT`` if another release's operator was here first."""
    listed = await call(
        api,
        "GET",
        "/apis/coordination.k8s.io/v1/leases",
        query=[("labelSelector", LEASE_SELECTOR)],
    )
    mine = (config.election.namespace, config.election.name)
    first = first_operator(listed["items"], mine, now_ms)
    if first is not None:
        raise refusal(first, config)
