"""The operator as the chart runs it: ``python -m ferry_operator`` processes with the env the
installed operator Deployment declares, authenticated as the chart's ServiceAccount.

The Deployment's downward-API values are supplied the way the kubelet would: ``POD_NAME`` is
each replica's own name, ``POD_NAMESPACE`` the release namespace. ``FERRY_HEALTH_PORT`` is a
free port (every pod has its own network namespace; these processes share one).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from typing import Any

from control_plane import REPO, ControlPlane
from support.processes import free_port
from support.waiting import eventually_blocking


@dataclass
class Release:
    """An installed chart release and what its operator runs as."""

    namespace: str
    deployment: str
    service_account: str
    lease: str

    @property
    def username(self) -> str:
        """The operator's user name in the API server's audit log."""
        return f"system:serviceaccount:{self.namespace}:{self.service_account}"


class OperatorProcess:
    """One operator replica, run as a local process."""

    def __init__(self, plane: ControlPlane, env: dict[str, str], identity: str) -> None:
        self.identity = identity
        self.health_port = free_port()
        self.log_path = plane.workdir / f"operator-{identity}-{self.health_port}.log"
        with self.log_path.open("wb") as log:  # the child keeps its own descriptor
            self.process = subprocess.Popen(
                [sys.executable, "-m", "ferry_operator"],
                env={**env, "POD_NAME": identity, "FERRY_HEALTH_PORT": str(self.health_port)},
                cwd=REPO,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def output(self) -> str:
        """Everything the process has logged so far."""
        return self.log_path.read_text(errors="replace")

    def healthz(self) -> dict[str, Any] | None:
        """``/healthz``'s answer, or ``None`` while nothing answers."""
        url = f"http://127.0.0.1:{self.health_port}/healthz"
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return dict(json.loads(answer.read()))
        except OSError:
            return None

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 30) -> int:
        """Signal the process and wait for its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signum)
        return self.process.wait(timeout=timeout)


def operator_env(plane: ControlPlane, release: Release) -> dict[str, str]:
    """The operator container's env from the installed Deployment, with a token kubeconfig."""
    deployment = eventually_blocking(
        lambda: plane.get("deployment", "-n", release.namespace, release.deployment),
        what="the operator Deployment",
    )
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["python", "-m", "ferry_operator"]
    env = {"PATH": os.environ["PATH"], "PYTHONUNBUFFERED": "1"}
    for item in container["env"]:
        if "valueFrom" not in item:
            env[item["name"]] = item.get("value", "")  # the API server drops empty values
        elif item["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace":
            env[item["name"]] = release.namespace
    token = plane.kubectl(
        "-n", release.namespace, "create", "token", release.service_account, "--duration=3h"
    ).strip()
    kubeconfig = plane.kubeconfig_for(f"operator-{release.namespace}", token)
    return {**env, "KUBECONFIG": str(kubeconfig)}


def lease_holder(plane: ControlPlane, release: Release) -> str | None:
    """Who holds the release's leader Lease now (``None``: nobody, or no Lease yet)."""
    found = plane.get("lease", "-n", release.namespace, release.lease)
    return ((found or {}).get("spec") or {}).get("holderIdentity")


RELEASE = Release(
    namespace="ferry-system",
    deployment="ferry-operator",
    service_account="ferry",
    lease="ferry-operator",
)
"""The session's release (tests/e2e/conftest.py installs it)."""


class Fleet:
    """A release's operator replicas."""

    def __init__(self, plane: ControlPlane, release: Release) -> None:
        self.plane = plane
        self.release = release
        self.env = operator_env(plane, release)
        self.replicas: list[OperatorProcess] = []

    def start(self, identity: str) -> OperatorProcess:
        replica = OperatorProcess(self.plane, self.env, identity)
        self.replicas.append(replica)
        return replica

    def holder(self) -> str | None:
        return lease_holder(self.plane, self.release)

    def leader(self) -> OperatorProcess:
        """The replica holding the Lease (waits until one does)."""

        def leading() -> OperatorProcess | None:
            holder = self.holder()
            return next((r for r in self.running() if r.identity == holder), None)

        return eventually_blocking(leading, what="an operator replica leading")

    def running(self) -> list[OperatorProcess]:
        return [r for r in self.replicas if r.process.poll() is None]

    def output(self) -> str:
        return "\n".join(f"--- {r.identity}\n{r.output()}" for r in self.replicas)

    def stop(self) -> dict[str, int]:
        """SIGTERM every running replica; their exit codes."""
        return {r.identity: r.stop() for r in self.running()}
