"""Two operator replicas: one leads on the release's Lease, the other stands by and takes over
— at once on a clean stop, after the lease duration on a crash — and another release's
operator refuses to run beside them. Handover times are measured and printed, not asserted."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator

import pytest
from control_plane import ControlPlane
from e2e_helpers import env_of, namespace_with_worker
from operator_process import Fleet, OperatorProcess
from support.waiting import eventually_blocking

NAMESPACE = "ferry-ha"


@pytest.fixture(scope="module")
def pair(control_plane: ControlPlane, operator: Fleet) -> Iterator[Fleet]:
    with namespace_with_worker(control_plane, NAMESPACE, "digest"):
        yield operator


def _standby(fleet: Fleet, leader: OperatorProcess) -> OperatorProcess:
    [standby] = [r for r in fleet.running() if r is not leader]
    return standby


def _concurrency(plane: ControlPlane) -> str:
    deployment = plane.get("deployment", "-n", NAMESPACE, "digest-worker")
    return str(env_of(deployment["spec"]["template"]["spec"]["containers"][0])["CONCURRENCY"])


def _reconciled_by_the_new_leader(plane: ControlPlane, concurrency: int) -> None:
    plane.kubectl(
        "patch",
        "dj",
        "digest",
        "-n",
        NAMESPACE,
        "--type=merge",
        "-p",
        json.dumps({"spec": {"concurrency": concurrency}}),
    )
    eventually_blocking(
        lambda: _concurrency(plane) == str(concurrency), what="the change reconciled"
    )


def test_one_replica_leads_and_the_other_stands_by_watching_nothing(pair: Fleet) -> None:
    leader = pair.leader()
    standby = _standby(pair, leader)
    assert leader.healthz() == {"ok": True, "leader": True}
    assert eventually_blocking(standby.healthz, what="the standby's /healthz") == {
        "ok": True,
        "leader": False,
    }
    log = standby.output()
    assert f"standing by: Lease ferry-system/ferry-operator is held by {leader.identity}" in log
    assert "kopf" not in log  # Kopf never started: a standby streams nothing


def test_a_stopped_leader_hands_over_to_the_standby_at_once(
    control_plane: ControlPlane, pair: Fleet
) -> None:
    leader = pair.leader()
    standby = _standby(pair, leader)
    started = time.monotonic()
    assert leader.stop(signal.SIGTERM) == 0
    stopped = time.monotonic()
    eventually_blocking(lambda: pair.holder() == standby.identity, what="the standby leading")
    led = time.monotonic()
    _reconciled_by_the_new_leader(control_plane, 21)
    reconciled = time.monotonic()
    print(
        f"\nSIGTERM handover: leader exited in {stopped - started:.2f} s, standby led "
        f"{led - started:.2f} s after SIGTERM, first change reconciled after "
        f"{reconciled - started:.2f} s"
    )
    pair.start(f"{leader.identity}-again")  # the restarted pod stands by


def test_a_killed_leader_is_replaced_once_its_lease_expires(
    control_plane: ControlPlane, pair: Fleet
) -> None:
    """SIGKILL: no release; the standby takes over after seeing the Lease unrenewed for its
    whole duration (15 s) on its own clock."""
    leader = pair.leader()
    standby = eventually_blocking(
        lambda: next(iter(r for r in pair.running() if r is not leader), None), what="a standby up"
    )
    eventually_blocking(lambda: "standing by" in standby.output(), what="the standby standing by")
    started = time.monotonic()
    leader.stop(signal.SIGKILL)
    eventually_blocking(
        lambda: pair.holder() == standby.identity, what="the standby leading", within_s=60
    )
    led = time.monotonic()
    _reconciled_by_the_new_leader(control_plane, 22)
    print(
        f"\nSIGKILL takeover: standby led {led - started:.1f} s after the kill (lease 15 s), "
        f"first change reconciled after {time.monotonic() - started:.1f} s"
    )
    pair.start(f"{leader.identity}-again")


def test_another_releases_operator_refuses_to_run_beside_the_first(
    control_plane: ControlPlane, pair: Fleet
) -> None:
    """An operator of a second cluster-wide release (its Lease in another namespace) finds
    the first one's live Lease and exits 2 with X_OPERATOR_CONFLICT, taking no Lease."""
    leader = pair.leader()
    intruder = OperatorProcess(
        control_plane, {**pair.env, "FERRY_LEASE_NAMESPACE": "intruder"}, "intruder-0"
    )
    code = intruder.process.wait(timeout=60)
    output = intruder.output()
    assert code == 2, output
    assert "X_OPERATOR_CONFLICT" in output
    assert f'Lease "ferry-system/ferry-operator", held by "{leader.identity}"' in output
    assert "fix: keep one release" in output
    assert control_plane.get("lease", "-n", "intruder", "ferry-operator") is None
    assert pair.holder() == leader.identity
