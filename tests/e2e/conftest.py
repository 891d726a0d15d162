"""Session fixtures: the control plane, the chart installed into it, the operator running
in-process under the chart's ServiceAccount (so its RBAC is what is tested)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest
from control_plane import REPO, ControlPlane, Unavailable, start_control_plane

RELEASE_NAMESPACE = "ferry-system"
OPERATOR_SERVICE_ACCOUNT = "ferry"


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    """etcd + kube-apiserver + kube-controller-manager on loopback for the session."""
    try:
        plane = start_control_plane()
    except Unavailable as missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must provision the control plane (make envtest): {missing}")
        pytest.skip(f"no Kubernetes control-plane binaries ({missing}); run `make envtest`")
    try:
        yield plane
    finally:
        plane.stop()
        shutil.rmtree(plane.workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def ferry_release(control_plane: ControlPlane) -> str:
    """``helm install`` of charts/ferry; returns the release namespace."""
    control_plane.run(
        "helm",
        "install",
        "ferry",
        str(REPO / "charts" / "ferry"),
        "--namespace",
        RELEASE_NAMESPACE,
        "--create-namespace",
    )
    return RELEASE_NAMESPACE


@pytest.fixture(scope="session")
def operator(control_plane: ControlPlane, ferry_release: str) -> Iterator[None]:
    """The Kopf operator in-process, authenticated as the chart's ServiceAccount."""
    from kopf.testing import KopfRunner

    token = control_plane.kubectl(
        "-n", ferry_release, "create", "token", OPERATOR_SERVICE_ACCOUNT, "--duration=2h"
    ).strip()
    kubeconfig = control_plane.kubeconfig_for("operator", token)
    previous = os.environ.get("KUBECONFIG")
    os.environ["KUBECONFIG"] = str(kubeconfig)
    try:
        with KopfRunner(
            ["run", "--all-namespaces", "--standalone", "-m", "ferry_operator.handlers"],
            timeout=60,
        ) as runner:
            yield
        assert runner.exit_code == 0, runner.output
    finally:
        if previous is None:
            os.environ.pop("KUBECONFIG", None)
        else:
            os.environ["KUBECONFIG"] = previous
