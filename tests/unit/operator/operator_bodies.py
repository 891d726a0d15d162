"""Resource bodies as the API server hands them to the operator."""

from __future__ import annotations

from typing import Any


def durable_job(name: str = "digest", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ferry.dev/v1alpha1",
        "kind": "DurableJob",
        "metadata": {"name": name, "namespace": "shop", "uid": f"uid-{name}", "generation": 1},
        "spec": {
            "image": "ghcr.io/acme/shop:1.2.3",
            "handler": "examples.demo.app:api",
            "databaseSecretRef": {"name": "shop-db", "key": "url"},
            **spec,
        },
    }


def scheduled_task(name: str = "nightly", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ferry.dev/v1alpha1",
        "kind": "ScheduledTask",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "uid": f"uid-{name}",
            "generation": 1,
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {
            "cron": "0 3 * * *",
            "timeZone": "Europe/Berlin",
            "entries": [{"job": "digest", "input": {"occurrence_ms": 0}}],
            **spec,
        },
    }
