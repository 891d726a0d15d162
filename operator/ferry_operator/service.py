"""The headless ``metrics`` Service in front of a ferry Deployment, for the chart's
ServiceMonitor to scrape (nothing routes traffic to these pods, hence no cluster IP).

Built from the Deployment manifest itself, so its name, owners, selector and port cannot
drift from the pods it fronts.
"""

from __future__ import annotations

from ferry_operator.names import COMPONENT, FIELD_MANAGER, MANAGED_BY, PART_OF
from ferry_operator.pods import Manifest


def metrics_service(deployment: Manifest) -> Manifest:
    """A headless Service named and owned like ``deployment``, exposing its ``metrics`` port."""
    meta = deployment["metadata"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    [port] = [p for p in container["ports"] if p["name"] == "metrics"]
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "labels": {
                PART_OF: "ferry",
                COMPONENT: meta["labels"][COMPONENT],
                MANAGED_BY: FIELD_MANAGER,
            },
            "ownerReferences": meta["ownerReferences"],
        },
        "spec": {
            "clusterIP": "None",
            "selector": dict(deployment["spec"]["selector"]["matchLabels"]),
            "ports": [
                {
                    "name": "metrics",
                    "port": port["containerPort"],
                    "targetPort": "metrics",
                    "protocol": "TCP",
                }
            ],
        },
    }
