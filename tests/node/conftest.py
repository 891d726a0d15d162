"""Session fixtures for real pods: a control plane whose API pods can reach, a node
(containerd + kubelet + kube-scheduler + kube-proxy) joined to it, the test PostgreSQL
relayed onto the node's address, and the chart installed with the image built from this
checkout — the operator running in the cluster as a pod.

Provisioned by ``scripts/node.sh`` (``make test-assets``). Needs root. Outside CI the tests
skip, saying why, when something is missing; in CI they fail.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

# The control plane is tests/e2e's, started here on the node's address.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))

from control_plane import Unavailable, control_plane_or_skip, provision, stop_control_plane
from node import NODE_IP, Cluster, Node, NodeAssets, Teardown, add_bridge, exclusive_node
from pg_relay import PgRelay, PodDatabase, relayed_dsn, with_database

RELEASE_NAMESPACE = "ferry-system"


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must provision the test node (make test-assets): {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def node_assets() -> NodeAssets:
    """Binaries and images from ``scripts/node.sh``."""
    try:
        return NodeAssets(provision("node.sh", "--no-build"))
    except Unavailable as missing:
        _unavailable(f"no test node ({missing})")
        raise


@pytest.fixture(scope="session")
def cluster(node_assets: NodeAssets) -> Iterator[Cluster]:
    """A one-node cluster on this machine, torn down completely afterwards."""
    if os.geteuid() != 0:
        _unavailable("the test node needs root (containerd, kubelet, iptables)")
    teardown = Teardown()
    workdir = Path(tempfile.mkdtemp(prefix="ferry-node-"))
    teardown.push("workdir", lambda: shutil.rmtree(workdir, ignore_errors=True))
    with exclusive_node():
        try:
            add_bridge(teardown)
            plane = control_plane_or_skip(NODE_IP)
            teardown.push("control plane", lambda: stop_control_plane(plane))
            node = Node(plane, node_assets, workdir, teardown)
            node.start()
            yield Cluster(plane, node)
        finally:
            failures = teardown.run()
            assert not failures, f"teardown left things behind: {failures}"


@pytest.fixture(scope="session")
def pod_database(postgres_dsn: str, cluster: Cluster) -> Iterator[PodDatabase]:
    """A fresh database on the test PostgreSQL, which pods reach through a relay."""
    name = f"ferry_node_{uuid.uuid4().hex[:10]}"
    asyncio.run(_admin(postgres_dsn, f'CREATE DATABASE "{name}"'))
    relay = PgRelay(postgres_dsn, NODE_IP)
    try:
        yield PodDatabase(
            host_dsn=with_database(postgres_dsn, name),
            pod_dsn=relayed_dsn(postgres_dsn, NODE_IP, relay.port, name),
        )
    finally:
        relay.close()
        asyncio.run(_admin(postgres_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def _admin(dsn: str, statement: str) -> None:
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


@pytest.fixture(scope="session")
def ferry_release(cluster: Cluster, node_assets: NodeAssets) -> str:
    """``helm install`` of charts/ferry with this checkout's image: the operator is a pod."""
    repository, tag = node_assets.runtime_image.rsplit(":", 1)
    cluster.plane.install_chart(
        RELEASE_NAMESPACE,
        "--set",
        f"image.repository={repository}",
        "--set",
        f"image.tag={tag}",
        "--set",
        "image.pullPolicy=Never",
        "--wait",
        "--timeout=3m",
    )
    return RELEASE_NAMESPACE
