"""Session fixtures: the control plane, the chart installed into it, and the operator running
as the chart runs it — two replicas electing a leader, under the chart's ServiceAccount (so its
RBAC is what is tested)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from control_plane import ControlPlane, control_plane_or_skip, stop_control_plane
from operator_process import RELEASE, Fleet


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    """etcd + kube-apiserver + kube-controller-manager on loopback for the session."""
    plane = control_plane_or_skip()
    try:
        yield plane
    finally:
        stop_control_plane(plane)


@pytest.fixture(scope="session")
def ferry_release(control_plane: ControlPlane) -> str:
    """``helm install`` of charts/ferry with its defaults; returns the release namespace."""
    control_plane.install_chart(RELEASE.namespace)
    return RELEASE.namespace


@pytest.fixture(scope="session")
def operator(control_plane: ControlPlane, ferry_release: str) -> Iterator[Fleet]:
    """Two operator replicas (the chart's replicaCount); one leads once the fixture returns."""
    fleet = Fleet(control_plane, RELEASE)
    fleet.start("ferry-operator-0")
    fleet.leader()
    fleet.start("ferry-operator-1")
    try:
        yield fleet
    finally:
        codes = fleet.stop()
    assert set(codes.values()) <= {0}, f"{codes}\n{fleet.output()}"
