"""What a broken DurableJob or ScheduledTask says, on real pods: the cause, at once.

Every resource goes in together; each test then waits for its own reason on ``kubectl get``
and its Warning event, and prints how long after the apply it appeared (the budget is a
guard, never the claim: a loaded machine may take longer):

- an image no registry serves — ``ImagePullFailed``, naming the image and the kubelet's error;
- a database URL with a wrong password (a real PostgreSQL checking passwords) —
  ``WorkersCrashLooping``, carrying the worker's ``X_DB_UNREACHABLE … password
  authentication failed`` from its termination log;
- a database Secret that does not exist — ``SecretNotFound``;
- a ScheduledTask whose scheduler cannot start (its DurableJob names a job the app lacks, so
  the scheduler refuses ``X_JOB_UNKNOWN`` at start) — not Ready, ``SchedulerCrashLooping``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

import pytest
from control_plane import ControlPlane
from e2e_helpers import HANDLER, condition, resource, restricted_namespace, secret
from node import NODE_IP, Cluster, NodeAssets
from password_postgres import password_postgres
from pg_relay import PodDatabase
from support.waiting import eventually_blocking

NAMESPACE = "ferry-node-causes"
PASSWORD = "right-horse-battery"
GUARD_S = 180.0
"""How long a test waits for its reason at most (it prints how long it took)."""


@dataclass
class Broken:
    """The resources applied, and when."""

    plane: ControlPlane
    applied: float

    def reason(self, kind: str, name: str, reason: str) -> tuple[dict[str, Any], float]:
        """The resource's Ready condition once ``kubectl get`` shows ``reason``; the seconds
        since the apply."""

        def shown() -> dict[str, Any] | None:
            printed = self.plane.kubectl("get", kind, name, "-n", NAMESPACE)
            if reason not in printed:
                return None
            return condition(self.plane.get(kind, name, "-n", NAMESPACE), "Ready")

        ready = eventually_blocking(
            shown, what=f"{kind} {name}: {reason}", within_s=GUARD_S, every_s=0.5
        )
        return ready, time.monotonic() - self.applied

    def warning(self, name: str, reason: str) -> dict[str, Any]:
        """The Warning event ``reason`` on ``name``; its ``after_s`` is how long after the
        resource's creation it was posted (whole seconds: the event's and the resource's
        timestamps), whatever order the tests run in."""

        def posted() -> dict[str, Any] | None:
            events = self.plane.get(
                "events", "-n", NAMESPACE, "--field-selector", f"involvedObject.name={name}"
            )["items"]
            return next(
                (e for e in events if e["type"] == "Warning" and e["reason"] == reason), None
            )

        found: dict[str, Any] = eventually_blocking(
            posted, what=f"a Warning {reason} on {name}", within_s=30
        )
        kind = found["involvedObject"]["kind"].lower()
        created = self.plane.get(kind, name, "-n", NAMESPACE)["metadata"]["creationTimestamp"]
        found["after_s"] = _epoch_s(found["firstTimestamp"]) - _epoch_s(created)
        return found


def _epoch_s(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())


@pytest.fixture(scope="module")
def broken(
    cluster: Cluster, ferry_release: str, pod_database: PodDatabase, node_assets: NodeAssets
) -> Iterator[Broken]:
    plane = cluster.plane
    image = node_assets.runtime_image
    with password_postgres(NODE_IP, PASSWORD) as (host, port):
        wrong = f"postgresql://postgres:{quote('not-' + PASSWORD)}@{host}:{port}/postgres"
        job = {"image": image, "handler": HANDLER, "databaseSecretRef": {"name": "db"}}
        bodies = [
            restricted_namespace(NAMESPACE),
            secret("db", NAMESPACE, pod_database.pod_dsn),
            secret("wrong-password", NAMESPACE, wrong),
            resource("DurableJob", "unpullable", NAMESPACE, {**job, "image": "ferry.local/nope:1"}),
            resource(
                "DurableJob",
                "wrong-password",
                NAMESPACE,
                {**job, "databaseSecretRef": {"name": "wrong-password"}},
            ),
            resource(
                "DurableJob",
                "no-secret",
                NAMESPACE,
                {**job, "databaseSecretRef": {"name": "never-created"}},
            ),
            resource("DurableJob", "ghost", NAMESPACE, {**job, "job": "no_such_job"}),
            resource(
                "ScheduledTask",
                "haunted",
                NAMESPACE,
                {"cron": "* * * * *", "timeZone": "UTC", "entries": [{"job": "ghost"}]},
            ),
        ]
        applied = time.monotonic()
        for body in bodies:
            plane.kubectl("apply", "-f", "-", stdin=json.dumps(body))
        try:
            yield Broken(plane, applied)
        except BaseException:
            print(plane.kubectl("get", "pods,dj,st", "-n", NAMESPACE, "-o", "wide", check=False))
            raise
        finally:
            plane.kubectl("delete", "namespace", NAMESPACE, "--timeout=90s", check=False)


def test_an_image_no_registry_serves_is_named_on_the_durable_job(broken: Broken) -> None:
    ready, took = broken.reason("dj", "unpullable", "ImagePullFailed")
    assert ready["status"] == "False"
    assert 'cannot pull image "ferry.local/nope:1"' in ready["message"], ready["message"]
    warning = broken.warning("unpullable", "ImagePullFailed")
    assert "ferry.local/nope:1" in warning["message"]
    _report("unpullable image", warning, took, ready)


def test_a_wrong_password_shows_the_workers_refusal_on_the_durable_job(broken: Broken) -> None:
    ready, took = broken.reason("dj", "wrong-password", "WorkersCrashLooping")
    assert "X_DB_UNREACHABLE: " in ready["message"], ready["message"]
    assert "password authentication failed" in ready["message"], ready["message"]
    assert PASSWORD not in ready["message"]
    warning = broken.warning("wrong-password", "WorkersCrashLooping")
    assert "password authentication failed" in warning["message"]
    _report("wrong password", warning, took, ready)


def test_a_missing_secret_is_its_own_reason(broken: Broken) -> None:
    ready, took = broken.reason("dj", "no-secret", "SecretNotFound")
    assert 'Secret "never-created"' in ready["message"]
    warning = broken.warning("no-secret", "SecretNotFound")
    _report("missing Secret", warning, took, ready)


def test_a_task_whose_scheduler_cannot_start_is_not_ready(broken: Broken) -> None:
    ready, took = broken.reason("st", "haunted", "SchedulerCrashLooping")
    assert ready["status"] == "False"
    assert "X_JOB_UNKNOWN" in ready["message"] and '"no_such_job"' in ready["message"]
    warning = broken.warning("haunted", "SchedulerCrashLooping")
    _report("scheduler refusing to start", warning, took, ready)


def _report(cause: str, warning: dict[str, Any], took: float, ready: dict[str, Any]) -> None:
    kind = warning["involvedObject"]["kind"]
    print(
        f"measured: {cause} → Warning {warning['reason']} {warning['after_s']} s after the "
        f"{kind}'s creation (seen on kubectl get by this test at {took:.1f} s)"
    )
    print(f"  message: {ready['message']}")
