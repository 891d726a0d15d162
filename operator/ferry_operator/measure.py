"""The queues' backlog, read where ferry already measures it: the ``/metrics`` of the
namespace's scheduler leader (which also says on which queue its app declares each job).

The leader samples the driver's stats into ``job_queue_backlog`` and
``job_queue_oldest_age_seconds``; its standby serves neither. The operator asks each
scheduler pod that runs and keeps the answer of the one reporting
``job_scheduler_leader 1`` — so it reads numbers over HTTP and never holds the database's
credentials. Parsing is pure; the fetch is handed in.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from ferry_operator.autoscale import QueueSample

logger = logging.getLogger("ferry_operator")

Fetch = Callable[[str], Awaitable[str]]
"""GETs a URL and answers the body (raises on any failure)."""


@dataclass(frozen=True)
class Measurement:
    """What the scheduler leader (pod ``leader``) serves: its queues as it last sampled
    them, and the queue its app declares each job on."""

    leader: str
    queues: Mapping[str, QueueSample]
    declared: Mapping[str, str]

    def queue(self, name: str) -> QueueSample:
        """``name``'s sample; a queue the leader does not report holds no run at all."""
        return self.queues.get(name, QueueSample(backlog=0, oldest_age_s=0.0))


def read_metrics(text: str, pod: str = "") -> tuple[bool, Measurement]:
    """Whether the scraped process (``pod``) leads, and what it serves."""
    leading = False
    backlog: dict[str, float] = {}
    ages: dict[str, float] = {}
    declared: dict[str, str] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "job_scheduler_leader":
                leading = sample.value == 1
            elif sample.name == "job_queue_backlog":
                backlog[sample.labels["queue"]] = sample.value
            elif sample.name == "job_queue_oldest_age_seconds":
                ages[sample.labels["queue"]] = sample.value
            elif sample.name == "job_declared_info" and sample.value == 1:
                declared[sample.labels["job"]] = sample.labels["queue"]
    queues = {
        queue: QueueSample(backlog=round(value), oldest_age_s=ages.get(queue, 0.0))
        for queue, value in backlog.items()
    }
    return leading, Measurement(pod, queues, declared)


def metrics_url(pod: Mapping[str, Any]) -> str | None:
    """Where a running pod serves ``/metrics``: its IP and its container's ``metrics`` port."""
    status = pod.get("status") or {}
    if pod["metadata"].get("deletionTimestamp") or status.get("phase") != "Running":
        return None
    address = status.get("podIP")
    ports = [
        port["containerPort"]
        for container in pod["spec"].get("containers", [])
        for port in container.get("ports") or []
        if port.get("name") == "metrics"
    ]
    if not address or not ports:
        return None
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}:{ports[0]}/metrics"


async def measure(pods: Sequence[Mapping[str, Any]], fetch: Fetch) -> Measurement | None:
    """The scheduler leader's measurement, from the first of ``pods`` that leads; ``None``
    while none does (a handover, pods starting) or none answers."""
    for pod in sorted(pods, key=lambda p: str(p["metadata"]["name"])):
        url = metrics_url(pod)
        if url is None:
            continue
        try:
            leading, served = read_metrics(await fetch(url), str(pod["metadata"]["name"]))
        except Exception as failed:  # a pod going away mid-scrape: ask the next one
            logger.debug("scraping %s failed: %s", url, failed)
            continue
        if leading:
            return served
    return None
