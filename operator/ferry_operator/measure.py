"""The queues' backlog, read where ferry already measures it: the ``/metrics`` of the
namespace's scheduler leader.

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
    """The queues as the scheduler leader (pod ``leader``) last sampled them."""

    leader: str
    queues: Mapping[str, QueueSample]

    def queue(self, name: str) -> QueueSample:
        """``name``'s sample; a queue the leader does not report holds no run at all."""
        return self.queues.get(name, QueueSample(backlog=0, oldest_age_s=0.0))


def read_metrics(text: str) -> tuple[bool, dict[str, QueueSample]]:
    """Whether the scraped process leads, and its queues' samples."""
    leading = False
    backlog: dict[str, float] = {}
    ages: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "job_scheduler_leader":
                leading = sample.value == 1
            elif sample.name == "job_queue_backlog":
                backlog[sample.labels["queue"]] = sample.value
            elif sample.name == "job_queue_oldest_age_seconds":
                ages[sample.labels["queue"]] = sample.value
    return leading, {
        queue: QueueSample(backlog=round(value), oldest_age_s=ages.get(queue, 0.0))
        for queue, value in backlog.items()
    }


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
            leading, queues = read_metrics(await fetch(url))
        except Exception as failed:  # a pod going away mid-scrape: ask the next one
            logger.debug("scraping %s failed: %s", url, failed)
            continue
        if leading:
            return Measurement(str(pod["metadata"]["name"]), queues)
    return None
