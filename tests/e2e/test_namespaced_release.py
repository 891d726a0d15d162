"""A release's life on its own control plane: CRDs left by an older chart adopted and upgraded
by the documented steps, a namespaced operator (``watchNamespaces``, Roles only) that serves
its namespace and nothing else, and an uninstall that keeps the CRDs and the resources."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from control_plane import REPO, ControlPlane, control_plane_or_skip, stop_control_plane
from e2e_helpers import apply, condition, durable_job
from operator_process import Fleet, Release
from support.waiting import eventually_blocking

CHART = str(REPO / "charts" / "ferry")
DOCS = REPO / "docs" / "ops" / "kubernetes.md"
RELEASE = Release(
    namespace="ops",
    deployment="ferry-ns-operator",
    service_account="ferry-ns",
    lease="ferry-ns-operator",
)
WATCHED, OTHER = "team-a", "team-b"
CRDS = ("durablejobs.ferry.dev", "scheduledtasks.ferry.dev")


def _older_crd(path: str) -> dict[str, Any]:
    """A CRD as an older chart left it: without the Reason column this chart adds."""
    crd: dict[str, Any] = yaml.safe_load((REPO / "crds" / path).read_text())
    [version] = crd["spec"]["versions"]
    version["additionalPrinterColumns"] = [
        c for c in version["additionalPrinterColumns"] if c["name"] != "Reason"
    ]
    return crd


def documented_adoption() -> tuple[list[list[str]], list[str]]:
    """The kubectl commands docs/ops/kubernetes.md gives for adopting older CRDs, with
    ``$RELEASE`` and ``$NAMESPACE`` filled in, and the flags of its ``helm upgrade``."""
    text = DOCS.read_text()
    section = text[text.index("### CRDs installed by an older chart") :]
    start = section.index("```sh") + len("```sh")
    block = section[start : section.index("```", start)]
    block = block.replace("$RELEASE", "ferry-ns").replace("$NAMESPACE", RELEASE.namespace)
    lines = re.sub(r"\\\n\s*", "", block).splitlines()
    kubectl = [shlex.split(line)[1:] for line in lines if line.startswith("kubectl ")]
    [helm] = [shlex.split(line) for line in lines if line.startswith("helm upgrade ")]
    assert len(kubectl) == 2, kubectl
    return kubectl, [flag for flag in helm if flag.startswith("--force")]


def _helm(plane: ControlPlane, verb: str, *extra: str, check: bool = True) -> str:
    return plane.run(
        "helm",
        verb,
        "ferry-ns",
        CHART,
        "--namespace",
        RELEASE.namespace,
        "--set",
        f"watchNamespaces={{{WATCHED}}}",
        "--set",
        "replicaCount=1",
        *extra,
        check=check,
    )


@pytest.fixture(scope="module")
def plane() -> Iterator[ControlPlane]:
    """A control plane of its own: this module installs CRDs the way an older chart did."""
    started = control_plane_or_skip()
    try:
        for namespace in (RELEASE.namespace, WATCHED, OTHER):
            started.kubectl("create", "namespace", namespace)
        yield started
    finally:
        stop_control_plane(started)


def test_crds_of_an_older_chart_are_adopted_and_upgraded_by_the_documented_steps(
    plane: ControlPlane,
) -> None:
    for path in ("ferry.dev_durablejobs.yaml", "ferry.dev_scheduledtasks.yaml"):
        plane.kubectl("create", "-f", "-", stdin=json.dumps(_older_crd(path)))
    # The older chart installed its CRDs from crds/, outside the release.
    _helm(plane, "install", "--set", "crds.install=false")
    refused = _helm(plane, "upgrade", check=False)
    assert "invalid ownership metadata" in refused, refused
    kubectl, flags = documented_adoption()
    for command in kubectl:
        plane.kubectl(*command)
    _helm(plane, "upgrade", *flags)
    for name in CRDS:
        crd = plane.get("crd", name)
        columns = [c["name"] for c in crd["spec"]["versions"][0]["additionalPrinterColumns"]]
        assert "Reason" in columns  # upgraded by the chart
        assert crd["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
        assert crd["metadata"]["annotations"]["meta.helm.sh/release-name"] == "ferry-ns"


@pytest.fixture(scope="module")
def namespaced(plane: ControlPlane) -> Iterator[Fleet]:
    """The release's operator, namespaced: one replica is enough here."""
    eventually_blocking(
        lambda: "ferry-ns" in plane.run("helm", "list", "-n", "ops", "-q"), what="the release"
    )
    fleet = Fleet(plane, RELEASE)
    fleet.start("ferry-ns-operator-0")
    fleet.leader()
    yield fleet
    assert set(fleet.stop().values()) <= {0}, fleet.output()


def test_a_namespaced_operator_serves_its_namespaces_and_ignores_the_others(
    plane: ControlPlane, namespaced: Fleet
) -> None:
    # The unwatched namespace's resource first: were it streamed, it would be handled first.
    apply(plane, durable_job("digest", OTHER), durable_job("digest", WATCHED))

    def served() -> bool:
        ready = condition(plane.get("dj", "-n", WATCHED, "digest"), "Ready")
        return ready is not None

    eventually_blocking(served, what=f"the DurableJob in {WATCHED} reconciled")
    assert plane.get("deployment", "-n", WATCHED, "digest-worker") is not None
    assert plane.get("deployment", "-n", OTHER, "digest-worker") is None
    assert "status" not in plane.get("dj", "-n", OTHER, "digest")
    requests = [e for e in plane.audit(RELEASE.username) if "objectRef" in e]
    assert requests
    places = {e["objectRef"].get("namespace") for e in requests}
    assert places <= {WATCHED, RELEASE.namespace}, places  # no cluster-scoped request at all


def test_a_namespaced_release_holds_no_cluster_wide_rights(
    plane: ControlPlane, namespaced: Fleet
) -> None:
    def can(*args: str) -> str:
        answer = plane.kubectl("auth", "can-i", *args, f"--as={RELEASE.username}", check=False)
        return answer.splitlines()[0]  # then maybe a warning

    assert can("list", "deployments", "--all-namespaces") == "no"
    assert can("list", "customresourcedefinitions") == "no"
    assert can("get", "secrets", "-n", OTHER) == "no"
    assert can("get", "secrets", "-n", WATCHED) == "yes"
    assert can("list", "durablejobs.ferry.dev", "-n", OTHER) == "no"
    bindings = plane.get("clusterrolebindings")["items"]
    assert not [
        b
        for b in bindings
        if any(s.get("name") == RELEASE.service_account for s in b.get("subjects") or [])
    ]


def test_uninstall_keeps_the_crds_and_every_resource(
    plane: ControlPlane, namespaced: Fleet
) -> None:
    namespaced.stop()
    plane.run("helm", "uninstall", "ferry-ns", "--namespace", RELEASE.namespace)
    for name in CRDS:
        assert plane.get("crd", name) is not None
    assert plane.get("dj", "-n", WATCHED, "digest") is not None
