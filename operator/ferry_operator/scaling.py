"""The autoscale loop: every few seconds, measure each namespace whose DurableJobs autoscale
and write their decisions.

Thin: it lists the namespace's DurableJobs and its scheduler pods, reads the leader's
``/metrics`` (``measure``), asks ``autoscale.decide`` and writes ``status.autoscaling``
where the decision changed. Writing the status is the whole act: the DurableJob's change
wakes the namespace's reconcile, which sets the worker Deployment's replicas from it and
posts the ``Scaled`` event with its message. Two API calls and one scrape a namespace a
round — never a full reconcile on a timer.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException

from ferry._clock import Clock
from ferry_operator.autoscale import decide, policy_of
from ferry_operator.config import DatabaseRef
from ferry_operator.kube import Kube, refusal
from ferry_operator.measure import Fetch, Measurement, measure
from ferry_operator.pods import Manifest, database_ref, with_database_default
from ferry_operator.scheduler import scheduler_labels
from ferry_operator.worker import job_queue

logger = logging.getLogger("ferry_operator")


class Autoscaler:
    """Decides, every ``every_s``, for the namespaces the reconcile reported autoscaled
    DurableJobs in."""

    def __init__(
        self,
        kube: Kube,
        fetch: Fetch,
        default_secret: DatabaseRef,
        clock: Clock,
        every_s: float,
    ) -> None:
        self._kube = kube
        self._fetch = fetch
        self._default_secret = default_secret
        self._clock = clock
        self._every_ms = round(every_s * 1000)
        self._namespaces: set[str] = set()

    def follow(self, namespace: str, autoscaled: bool) -> None:
        """What the namespace's reconcile found: whether any DurableJob there autoscales."""
        if autoscaled:
            self._namespaces.add(namespace)
        else:
            self._namespaces.discard(namespace)

    async def run(self) -> None:
        """Round after round until cancelled; one namespace failing skips only its round."""
        while True:
            await self._clock.sleep_ms(self._every_ms)
            for namespace in sorted(self._namespaces):
                try:
                    await self.decide_namespace(namespace)
                except ApiException as failed:
                    logger.warning("autoscaling %s: %s", namespace, refusal(failed))
                except Exception:
                    logger.exception("autoscaling %s failed", namespace)

    async def decide_namespace(self, namespace: str) -> None:
        """Measure ``namespace``'s queues and write every changed decision."""
        jobs = [
            (policy, with_database_default(job, self._default_secret))
            for job in await self._kube.list_resources("durablejobs", namespace)
            if not job["metadata"].get("deletionTimestamp")
            and (policy := policy_of(job["spec"])) is not None
        ]
        if not jobs:
            return
        pods = await self._kube.owned_pods(namespace, scheduler_labels())
        measurement = await measure(pods, self._fetch)
        measured = _measured_database(pods)
        now_ms = self._clock.now_ms()
        for policy, job in jobs:
            queue = job_queue(job)
            on_measured = database_ref(job["spec"]) == measured
            sample = measurement.queue(queue) if measurement and on_measured else None
            stored = (job.get("status") or {}).get("autoscaling") or {}
            decision = decide(policy, stored, sample, queue, now_ms)
            if decision != stored:
                await self._write(job, stored, decision, measurement)

    async def _write(
        self,
        job: Manifest,
        stored: Mapping[str, Any],
        decision: Mapping[str, Any],
        measurement: Measurement | None,
    ) -> None:
        meta = job["metadata"]
        # A merge patch deletes a key by naming it null.
        patch = {**dict.fromkeys(stored), **decision}
        await self._kube.patch_status(
            "durablejobs", meta["namespace"], meta["name"], {"autoscaling": patch}
        )
        if stored.get("replicas") != decision.get("replicas"):
            logger.info(
                "autoscaling %s/%s to %s replicas (%s; measured on %s)",
                meta["namespace"],
                meta["name"],
                decision.get("replicas"),
                decision.get("message"),
                measurement.leader if measurement else "nothing",
            )


def _measured_database(pods: list[Manifest]) -> DatabaseRef | None:
    """The database the scheduler pods read (their ``DATABASE_URL`` Secret key)."""
    for pod in pods:
        for container in pod["spec"].get("containers", []):
            for env in container.get("env") or []:
                source = (env.get("valueFrom") or {}).get("secretKeyRef")
                if env.get("name") == "DATABASE_URL" and source:
                    return DatabaseRef(name=source["name"], key=source.get("key", "url"))
    return None
