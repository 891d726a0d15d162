"""Leader election on a ``coordination.k8s.io`` Lease: one operator replica reconciles, the
other stands by warm and takes over.

Why a Lease and not Kopf's peering: peering is a pause signal for a developer's operator to
quiet a deployed one, not an election — peers of equal priority all pause, there is no
handover to a standby, and it needs CRDs of its own. A Lease is what kube-controller-manager,
cert-manager and CloudNativePG (controller-runtime) elect on, and ``kubectl get lease`` shows
who leads.

The rules are controller-runtime's. The holder renews every retry period. A standby takes the
Lease once it has seen the same record, unrenewed, for a whole lease duration *by its own
clock* — never by comparing the holder's ``renewTime`` with its own clock, so skew between
nodes cannot shorten a lease. A holder that has failed to renew for the renew deadline (shorter
than the lease) stops reconciling before anyone may take over. A holder that exits cleanly
empties ``holderIdentity``, and the standby takes over on its next round instead of waiting
the lease out.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import aiohttp
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ferry._clock import Clock, SystemClock
from ferry_operator.config import LeaderElection, OperatorConfig
from ferry_operator.kube import call
from ferry_operator.names import WATCH_NAMESPACES_ANNOTATION, WATCH_SCOPE_LABEL
from ferry_operator.pods import Manifest

logger = logging.getLogger("ferry_operator")

LEASES = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
LEASE = f"{LEASES}/{{name}}"


def micro_time(ms: int) -> str:
    """An instant as a Kubernetes ``MicroTime``."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def epoch_ms(stamp: str) -> int:
    """A Kubernetes ``Time`` or ``MicroTime`` as epoch milliseconds."""
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def claim(spec: Mapping[str, Any] | None, identity: str, now_ms: int, lease_s: int) -> Manifest:
    """The Lease spec that makes ``identity`` the holder as of ``now_ms``: a renewal keeps the
    acquire time and the transition count, a takeover starts both afresh."""
    spec = spec or {}
    renewal = spec.get("holderIdentity") == identity
    transitions = int(spec.get("leaseTransitions") or 0)
    return {
        "holderIdentity": identity,
        "leaseDurationSeconds": lease_s,
        "acquireTime": spec.get("acquireTime") if renewal else micro_time(now_ms),
        "renewTime": micro_time(now_ms),
        "leaseTransitions": transitions if renewal or not spec else transitions + 1,
    }


def lease_metadata(config: OperatorConfig) -> Manifest:
    """The leader Lease's labels and annotations: what the cluster-wide check finds it by."""
    scope = "cluster" if config.clusterwide else "namespaces"
    return {
        "labels": {
            "app.kubernetes.io/name": "ferry",
            "app.kubernetes.io/component": "operator-leader",
            WATCH_SCOPE_LABEL: scope,
        },
        "annotations": {WATCH_NAMESPACES_ANNOTATION: ",".join(config.watch_namespaces) or "*"},
    }


class Observation:
    """A standby's view of the Lease: the record it last saw, and when (by its own clock)."""

    def __init__(self) -> None:
        self._record: tuple[Any, ...] | None = None
        self._since_ms = 0
        self._lease_ms = 0

    def see(self, spec: Mapping[str, Any], now_ms: int) -> None:
        """Note the Lease's current record; a changed one restarts the count."""
        record = (spec.get("holderIdentity"), spec.get("renewTime"), spec.get("leaseTransitions"))
        if record != self._record:
            self._record, self._since_ms = record, now_ms
        self._lease_ms = int(spec.get("leaseDurationSeconds") or 0) * 1000

    def expired(self, now_ms: int) -> bool:
        """Whether the record has gone unrenewed for a whole lease duration."""
        return now_ms - self._since_ms >= self._lease_ms


class LeaseElector:
    """One replica's side of the election on its release's Lease."""

    def __init__(
        self, api: client.ApiClient, config: OperatorConfig, clock: Clock | None = None
    ) -> None:
        self._api = api
        self._election: LeaderElection = config.election
        self._metadata = lease_metadata(config)
        self._clock = clock or SystemClock()
        self._observed = Observation()
        self.leading = False
        self.holder: str | None = None

    @property
    def _params(self) -> dict[str, str]:
        return {"namespace": self._election.namespace, "name": self._election.name}

    async def try_acquire(self) -> bool:
        """One round: create, renew or take over the Lease; whether this replica holds it."""
        election = self._election
        now = self._clock.now_ms()
        try:
            lease = await call(self._api, "GET", LEASE, params=self._params)
        except ApiException as failed:
            if failed.status != 404:
                raise
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": election.name, **self._metadata},
                "spec": claim(None, election.identity, now, election.lease_s),
            }
            return await self._write("POST", LEASES, body)
        spec = lease.get("spec") or {}
        self._observed.see(spec, now)
        self.holder = spec.get("holderIdentity") or None
        if self.holder not in (None, election.identity) and not self._observed.expired(now):
            return False
        metadata = lease["metadata"]
        for key in ("labels", "annotations"):
            metadata[key] = {**(metadata.get(key) or {}), **self._metadata[key]}
        lease["spec"] = claim(spec, election.identity, now, election.lease_s)
        # The PUT carries the resourceVersion read: two standbys racing, one wins.
        return await self._write("PUT", LEASE, lease)

    async def _write(self, method: str, path: str, body: Manifest) -> bool:
        try:
            await call(self._api, method, path, params=self._params, body=body)
        except ApiException as failed:
            if failed.status == 409:
                return False
            raise
        self.leading, self.holder = True, self._election.identity
        return True

    async def acquire(self, stop: asyncio.Event) -> bool:
        """Stand by until this replica leads (True) or ``stop`` is set (False)."""
        announced = False
        while not stop.is_set():
            if await self._round():
                logger.info(
                    "leading: Lease %s/%s is held by %s",
                    self._election.namespace,
                    self._election.name,
                    self._election.identity,
                )
                return True
            if not announced:
                logger.info(
                    "standing by: Lease %s/%s is held by %s",
                    self._election.namespace,
                    self._election.name,
                    self.holder,
                )
                announced = True
            await _sleep_or(stop, self._clock, self._election.retry_s * 1000)
        return False

    async def renew(self) -> bool:
        """One renewal round; a failed call counts as a failed renewal (the deadline decides)."""
        return await self._round()

    async def _round(self) -> bool:
        try:
            held = await self.try_acquire()
        except (TimeoutError, ApiException, aiohttp.ClientError, OSError) as failed:
            logger.warning("leader election round failed: %s", failed)
            held = False
        self.leading = held
        return held

    async def release(self) -> None:
        """Hand the Lease over at once: empty its holder if this replica still holds it."""
        if not self.leading:
            return
        self.leading = False
        try:
            lease = await call(self._api, "GET", LEASE, params=self._params)
            if (lease.get("spec") or {}).get("holderIdentity") != self._election.identity:
                return
            lease["spec"] = {
                **lease["spec"],
                "holderIdentity": None,
                "leaseDurationSeconds": 1,
                "renewTime": micro_time(self._clock.now_ms()),
            }
            await call(self._api, "PUT", LEASE, params=self._params, body=lease)
        except (ApiException, aiohttp.ClientError, OSError) as failed:
            # The standby then takes over once the lease expires instead.
            logger.warning("releasing the leader Lease failed: %s", failed)


async def _sleep_or(stop: asyncio.Event, clock: Clock, ms: int) -> None:
    """Sleep ``ms`` on ``clock``, or less if ``stop`` is set meanwhile."""
    stopped = asyncio.ensure_future(stop.wait())
    slept = asyncio.ensure_future(clock.sleep_ms(ms))
    try:
        await asyncio.wait({stopped, slept}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pending in (stopped, slept):
            pending.cancel()
