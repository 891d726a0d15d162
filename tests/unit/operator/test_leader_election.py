"""The Lease rules: claims, a standby's own-clock expiry, and which release's operator leads."""

from __future__ import annotations

from typing import Any

from ferry_operator.config import config_from_env
from ferry_operator.exclusive import alive, first_operator, refusal
from ferry_operator.leader import Observation, claim, epoch_ms, lease_metadata, micro_time

T0 = 1_780_315_200_000  # 2026-06-01T12:00:00Z


def test_micro_time_round_trips() -> None:
    assert micro_time(T0 + 123) == "2026-06-01T12:00:00.123000Z"
    assert epoch_ms(micro_time(T0 + 123)) == T0 + 123
    assert epoch_ms("2026-06-01T12:00:00Z") == T0


def test_a_first_claim_a_renewal_and_a_takeover() -> None:
    first = claim(None, "a", T0, 15)
    assert first == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": micro_time(T0),
        "renewTime": micro_time(T0),
        "leaseTransitions": 0,
    }
    renewed = claim(first, "a", T0 + 2000, 15)
    assert renewed["acquireTime"] == first["acquireTime"]
    assert (renewed["renewTime"], renewed["leaseTransitions"]) == (micro_time(T0 + 2000), 0)
    taken = claim(renewed, "b", T0 + 20_000, 15)
    assert (taken["holderIdentity"], taken["leaseTransitions"]) == ("b", 1)
    assert taken["acquireTime"] == micro_time(T0 + 20_000)


def test_a_standby_counts_expiry_on_its_own_clock_from_the_last_change_it_saw() -> None:
    seen = Observation()
    # The holder's renewTime is an hour ahead of this node's clock (skew): irrelevant.
    spec = claim(None, "a", T0 + 3_600_000, 15)
    seen.see(spec, T0)
    assert not seen.expired(T0 + 14_999)
    seen.see(spec, T0 + 14_000)  # the same record again: still counting from T0
    assert seen.expired(T0 + 15_000)
    seen.see(claim(spec, "a", T0 + 3_602_000, 15), T0 + 15_000)  # renewed: count restarts
    assert not seen.expired(T0 + 29_999)


def _lease(
    namespace: str, created: str, *, holder: str | None = "pod", renewed_ms: int = T0
) -> Any:
    return {
        "metadata": {
            "namespace": namespace,
            "name": "ferry-operator",
            "creationTimestamp": created,
            "annotations": {"ferry.dev/watch-namespaces": "*"},
        },
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 15,
            "renewTime": micro_time(renewed_ms),
        },
    }


def test_a_lease_is_alive_while_held_and_renewed_within_its_duration() -> None:
    assert alive(_lease("a", "2026-01-01T00:00:00Z"), T0 + 14_000)
    assert not alive(_lease("a", "2026-01-01T00:00:00Z"), T0 + 15_000)
    assert not alive(_lease("a", "2026-01-01T00:00:00Z", holder=None), T0)


def test_the_older_live_release_leads_and_the_younger_refuses() -> None:
    older = _lease("ops", "2026-01-01T00:00:00Z")
    younger = _lease("shop", "2026-02-01T00:00:00Z")
    leases = [younger, older]
    assert first_operator(leases, ("ops", "ferry-operator"), T0) is None
    assert first_operator(leases, ("shop", "ferry-operator"), T0) is older
    # Before it has a Lease at all, any live one is there first.
    assert first_operator([older], ("new", "ferry-operator"), T0) is older


def test_a_dead_or_released_lease_of_another_release_does_not_block() -> None:
    stale = _lease("ops", "2026-01-01T00:00:00Z", renewed_ms=T0 - 60_000)
    released = _lease("ops2", "2026-01-01T00:00:00Z", holder=None)
    assert first_operator([stale, released], ("shop", "ferry-operator"), T0) is None


def test_the_refusal_names_the_operator_that_was_there_first_and_the_fix() -> None:
    config = config_from_env({"POD_NAMESPACE": "shop", "POD_NAME": "p"})
    refused = refusal(_lease("ops", "2026-01-01T00:00:00Z", holder="ops-pod"), config)
    assert refused.code == "X_OPERATOR_CONFLICT"
    assert 'Lease "ops/ferry-operator", held by "ops-pod"' in refused.message
    assert "every namespace" in refused.message and '"shop/ferry-operator"' in refused.message
    assert "helm uninstall" in refused.fix and "watchNamespaces" in refused.fix


def test_the_lease_says_what_its_release_reconciles() -> None:
    cluster = lease_metadata(config_from_env({"POD_NAMESPACE": "ops"}))
    assert cluster["labels"] == {
        "app.kubernetes.io/name": "ferry",
        "app.kubernetes.io/component": "operator-leader",
        "ferry.dev/watch": "cluster",
    }
    assert cluster["annotations"] == {"ferry.dev/watch-namespaces": "*"}
    namespaced = lease_metadata(
        config_from_env({"POD_NAMESPACE": "ops", "FERRY_WATCH_NAMESPACES": "b,a"})
    )
    assert namespaced["labels"]["ferry.dev/watch"] == "namespaces"
    assert namespaced["annotations"] == {"ferry.dev/watch-namespaces": "a,b"}
