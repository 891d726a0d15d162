"""The operator's environment: defaults for a cluster-wide install, refusals naming the variable."""

from __future__ import annotations

import pytest

from ferry.errors import FerryError
from ferry_operator.config import DatabaseRef, config_from_env

BASE = {"POD_NAMESPACE": "ferry-system", "POD_NAME": "ferry-operator-abc"}


def test_the_defaults_are_one_cluster_wide_operator_reading_the_default_secret() -> None:
    config = config_from_env(BASE)
    assert config.clusterwide and config.watch_namespaces == ()
    assert config.default_secret == DatabaseRef("ferry-database", "url")
    election = config.election
    assert (election.namespace, election.name, election.identity) == (
        "ferry-system",
        "ferry-operator",
        "ferry-operator-abc",
    )
    assert (election.retry_s, election.renew_deadline_s, election.lease_s) == (2, 10, 15)
    assert config.release == "ferry-system/ferry-operator"


def test_watch_namespaces_make_a_namespaced_operator() -> None:
    config = config_from_env({**BASE, "FERRY_WATCH_NAMESPACES": " team-b,team-a,,team-b "})
    assert config.watch_namespaces == ("team-a", "team-b")
    assert not config.clusterwide


def test_the_chart_values_reach_the_config() -> None:
    config = config_from_env(
        {
            **BASE,
            "FERRY_LEASE_NAMESPACE": "ops",
            "FERRY_LEASE_NAME": "shop-ferry-operator",
            "FERRY_DEFAULT_DATABASE_SECRET": "shop-db",
            "FERRY_DEFAULT_DATABASE_SECRET_KEY": "dsn",
            "FERRY_LEASE_DURATION_SECONDS": "30",
            "FERRY_LEASE_RENEW_DEADLINE_SECONDS": "20",
            "FERRY_LEASE_RETRY_SECONDS": "4",
            "FERRY_HEALTH_PORT": "9443",
            "FERRY_LOG_LEVEL": "DEBUG",
        }
    )
    assert config.release == "ops/shop-ferry-operator"
    assert config.default_secret == DatabaseRef("shop-db", "dsn")
    assert (config.election.lease_s, config.election.renew_deadline_s) == (30, 20)
    assert (config.health_port, config.log_level) == (9443, "DEBUG")


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"POD_NAME": "x"}, "FERRY_LEASE_NAMESPACE"),
        ({**BASE, "FERRY_WATCH_NAMESPACES": "Team_A"}, "FERRY_WATCH_NAMESPACES"),
        ({**BASE, "FERRY_DEFAULT_DATABASE_SECRET": "My Secret"}, "FERRY_DEFAULT_DATABASE_SECRET"),
        ({**BASE, "FERRY_LEASE_RETRY_SECONDS": "soon"}, "FERRY_LEASE_RETRY_SECONDS"),
        ({**BASE, "FERRY_LEASE_RENEW_DEADLINE_SECONDS": "20"}, "FERRY_LEASE_DURATION_SECONDS"),
        ({**BASE, "FERRY_HEALTH_PORT": "80"}, "FERRY_HEALTH_PORT"),
        ({**BASE, "FERRY_LOG_LEVEL": "LOUD"}, "FERRY_LOG_LEVEL"),
    ],
)
def test_a_bad_setting_is_refused_naming_its_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(FerryError) as refused:
        config_from_env(env)
    assert refused.value.code == "X_INVARIANT"
    assert named in f"{refused.value.message} {refused.value.fix}"
