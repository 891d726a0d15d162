"""A real Kubernetes control plane on loopback: etcd, kube-apiserver (RBAC on) and
kube-controller-manager (garbage collection, Deployment → ReplicaSet → Pod), no kubelet.

The API server keeps an audit log of every request a ServiceAccount makes (metadata level),
so a test can read what the operator asked the server for, query strings included.

Binaries follow the envtest convention: ``KUBEBUILDER_ASSETS``, else ``scripts/envtest.sh``
builds them into a cache outside the repo. Auth is a static admin token in
``system:masters``; other identities (the operator's ServiceAccount) get TokenRequest tokens.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import tempfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.processes import free_port
from support.waiting import eventually_blocking

REPO = Path(__file__).resolve().parents[2]
START_BUDGET_S = 90.0
AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts"]
  - level: None
"""


class Unavailable(Exception):
    """The control-plane binaries or the kube tools are not on this machine."""


def provision(script: str, offline_flag: str) -> Path:
    """Run a provisioning script: in CI it builds/fetches what is missing, elsewhere it only
    looks, so a developer's test run never starts a seven-minute build unasked."""
    command = [str(REPO / "scripts" / script)]
    if not os.environ.get("CI"):
        command.append(offline_flag)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise Unavailable(done.stderr.strip() or f"{script} exited {done.returncode}")
    return Path(done.stdout.strip().splitlines()[-1])


@dataclass
class ControlPlane:
    """A running control plane and the tools to talk to it."""

    workdir: Path
    server: str
    admin_token: str
    kubeconfig: Path
    tools: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def env(self, kubeconfig: Path | None = None) -> dict[str, str]:
        """The environment a kube client uses to reach this control plane."""
        return {**os.environ, "KUBECONFIG": str(kubeconfig or self.kubeconfig)}

    def run(self, tool: str, *args: str, stdin: str | None = None, check: bool = True) -> str:
        """Run kubectl or helm against the control plane; returns stdout."""
        done = subprocess.run(
            [str(self.tools / tool), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env(),
            check=False,
            timeout=120,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"{tool} {' '.join(args)} failed:\n{done.stderr}{done.stdout}")
        return done.stdout if done.returncode == 0 else done.stdout + done.stderr

    def install_chart(self, namespace: str, *options: str) -> None:
        """``helm install ferry charts/ferry`` into ``namespace`` (created when missing)."""
        chart = str(REPO / "charts" / "ferry")
        self.run("helm", "install", "ferry", chart, "-n", namespace, "--create-namespace", *options)

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        return self.run("kubectl", *args, stdin=stdin, check=check)

    def get(self, *args: str) -> Any:
        """``kubectl get ... -o json`` parsed, or ``None`` when it is not found."""
        done = subprocess.run(
            [str(self.tools / "kubectl"), "get", *args, "-o", "json"],
            capture_output=True,
            text=True,
            env=self.env(),
            check=False,
        )
        if done.returncode != 0:
            if "NotFound" in done.stderr:
                return None
            raise AssertionError(done.stderr)
        return json.loads(done.stdout)

    def audit(self, username: str) -> list[dict[str, Any]]:
        """Every audited request ``username`` made so far (one entry per stage)."""
        path = self.workdir / "audit.log"
        if not path.exists():
            return []
        events = []
        for line in path.read_text().splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                continue  # the line being written right now
        return [e for e in events if e.get("user", {}).get("username") == username]

    def kubeconfig_for(self, name: str, token: str) -> Path:
        """A kubeconfig acting as whoever ``token`` belongs to."""
        path = self.workdir / f"{name}.kubeconfig"
        write_kubeconfig(path, self.server, token, self.workdir / "certs" / "apiserver.crt")
        return path

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.terminate()
        for process in reversed(self.processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def write_kubeconfig(path: Path, server: str, token: str, ca: Path) -> None:
    # JSON is YAML: every client reads it.
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "envtest", "cluster": {"server": server, "certificate-authority": str(ca)}}
        ],
        "users": [{"name": "user", "user": {"token": token}}],
        "contexts": [{"name": "envtest", "context": {"cluster": "envtest", "user": "user"}}],
        "current-context": "envtest",
    }
    path.write_text(json.dumps(config))


def start_control_plane(address: str = "127.0.0.1") -> ControlPlane:
    """Start etcd, kube-apiserver and kube-controller-manager; wait until the API is ready.

    The API serves on ``address``: loopback unless pods must reach it (tests/node passes its
    node's address, which the ``kubernetes`` Service then points at)."""
    assets = provision("envtest.sh", "--no-build")
    tools = provision("kubetools.sh", "--no-fetch")
    workdir = Path(tempfile.mkdtemp(prefix="ferry-envtest-"))
    certs = workdir / "certs"
    certs.mkdir()
    subprocess.run(
        ["openssl", "genrsa", "-out", str(workdir / "sa.key"), "2048"],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            "openssl",
            "rsa",
            "-in",
            str(workdir / "sa.key"),
            "-pubout",
            "-out",
            str(workdir / "sa.pub"),
        ],
        check=True,
        capture_output=True,
    )
    token = os.urandom(16).hex()
    (workdir / "audit-policy.yaml").write_text(AUDIT_POLICY)
    (workdir / "tokens.csv").write_text(f'{token},admin,admin,"system:masters"\n')
    etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
    logs = workdir / "logs"
    logs.mkdir()
    server = f"https://{address}:{api_port}"
    plane = ControlPlane(workdir, server, token, workdir / "admin.kubeconfig", tools)

    def spawn(name: str, *args: str) -> None:
        log = (logs / f"{name}.log").open("wb")
        plane.processes.append(
            subprocess.Popen([str(assets / name), *args], stdout=log, stderr=subprocess.STDOUT)
        )

    try:
        spawn(
            "etcd",
            f"--data-dir={workdir / 'etcd'}",
            f"--listen-client-urls=http://127.0.0.1:{etcd_port}",
            f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
            f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
            f"--initial-cluster=default=http://127.0.0.1:{peer_port}",
            "--unsafe-no-fsync",
        )
        spawn(
            "kube-apiserver",
            f"--etcd-servers=http://127.0.0.1:{etcd_port}",
            f"--bind-address={address}",
            f"--advertise-address={address}",
            f"--secure-port={api_port}",
            f"--cert-dir={certs}",
            "--authorization-mode=RBAC",
            f"--token-auth-file={workdir / 'tokens.csv'}",
            f"--service-account-key-file={workdir / 'sa.pub'}",
            f"--service-account-signing-key-file={workdir / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc",
            "--service-cluster-ip-range=10.96.0.0/16",
            f"--audit-policy-file={workdir / 'audit-policy.yaml'}",
            f"--audit-log-path={workdir / 'audit.log'}",
            "--audit-log-mode=blocking",
            # A kubelet (tests/node) is reached at its address, not a name to look up.
            "--kubelet-preferred-address-types=InternalIP",
        )
        ca = certs / "apiserver.crt"
        _wait_ready(server, token, ca)
        write_kubeconfig(plane.kubeconfig, server, token, ca)
        spawn(
            "kube-controller-manager",
            f"--kubeconfig={plane.kubeconfig}",
            "--leader-elect=false",
            "--secure-port=0",
            f"--service-account-private-key-file={workdir / 'sa.key'}",
            f"--root-ca-file={ca}",
            "--use-service-account-credentials=false",
            "--controllers=*",
        )
    except BaseException:
        plane.stop()
        raise
    return plane


def control_plane_or_skip(address: str = "127.0.0.1") -> ControlPlane:
    """A started control plane; outside CI a missing binary skips, saying why."""
    try:
        return start_control_plane(address)
    except Unavailable as missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must provision the control plane (make envtest): {missing}")
        pytest.skip(f"no Kubernetes control-plane binaries ({missing}); run `make envtest`")


def stop_control_plane(plane: ControlPlane) -> None:
    plane.stop()
    shutil.rmtree(plane.workdir, ignore_errors=True)


def _wait_ready(server: str, token: str, ca: Path) -> None:
    """Wait until ``/readyz`` (RBAC bootstrap included) answers 200, naming the last error."""
    last = ["not started"]

    def ready() -> bool:
        if not ca.exists():
            return False
        context = ssl.create_default_context(cafile=str(ca))
        request = urllib.request.Request(
            f"{server}/readyz", headers={"Authorization": f"Bearer {token}"}
        )
        try:
            with urllib.request.urlopen(request, context=context, timeout=5) as answer:
                return bool(answer.status == 200)
        except OSError as failed:
            last[0] = str(failed)
            return False

    eventually_blocking(
        ready, what="kube-apiserver ready", within_s=START_BUDGET_S, context=lambda: last[0]
    )
