"""The operator's settings, read once from the environment the chart's Deployment declares.

Every setting has a default that suits a single cluster-wide install, so the operator also runs
outside a cluster with only ``KUBECONFIG`` and ``FERRY_LEASE_NAMESPACE`` set. A bad value is
refused at start, naming the variable, before the operator touches the cluster.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from ferry.errors import FerryError

DEFAULT_SECRET_NAME = "ferry-database"
DEFAULT_SECRET_KEY = "url"
DEFAULT_LEASE_NAME = "ferry-operator"
DEFAULT_HEALTH_PORT = 8080
DEFAULT_AUTOSCALE_SECONDS = 5

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")


@dataclass(frozen=True)
class DatabaseRef:
    """A Secret key holding the PostgreSQL URL, in the namespace of the resource naming it."""

    name: str
    key: str = DEFAULT_SECRET_KEY


@dataclass(frozen=True)
class LeaderElection:
    """The Lease the operator replicas of one release elect their leader on.

    Timings follow controller-runtime's defaults (as cert-manager and CloudNativePG run them):
    the leader renews every ``retry_s``; it stops reconciling once it has failed to renew for
    ``renew_deadline_s``, which is shorter than ``lease_s``, so it has stopped before a standby
    may take the lease over.
    """

    namespace: str
    name: str
    identity: str
    lease_s: int = 15
    renew_deadline_s: int = 10
    retry_s: int = 2


@dataclass(frozen=True)
class OperatorConfig:
    """What one operator process serves and how it elects its leader."""

    watch_namespaces: tuple[str, ...]
    """Empty: every namespace (cluster-wide, ClusterRoles); else exactly these (Roles)."""
    default_secret: DatabaseRef
    election: LeaderElection
    health_port: int = DEFAULT_HEALTH_PORT
    log_level: str = "INFO"
    autoscale_s: int = DEFAULT_AUTOSCALE_SECONDS
    """How often the namespaces with autoscaled DurableJobs are measured and decided."""

    @property
    def clusterwide(self) -> bool:
        """Whether the operator reconciles every namespace."""
        return not self.watch_namespaces

    @property
    def release(self) -> str:
        """The release this operator belongs to, as ``namespace/lease``."""
        return f"{self.election.namespace}/{self.election.name}"


def config_from_env(env: Mapping[str, str] = os.environ) -> OperatorConfig:
    """The configuration the environment describes; refuses a bad value naming its variable."""
    lease_namespace = env.get("FERRY_LEASE_NAMESPACE") or env.get("POD_NAMESPACE", "")
    if not lease_namespace:
        raise FerryError(
            "X_INVARIANT",
            "the operator has no namespace for its leader Lease (FERRY_LEASE_NAMESPACE and "
            "POD_NAMESPACE are unset)",
            "set FERRY_LEASE_NAMESPACE to the release namespace (the chart sets POD_NAMESPACE "
            "from the downward API)",
        )
    election = LeaderElection(
        namespace=_name("FERRY_LEASE_NAMESPACE", lease_namespace, _DNS_LABEL),
        name=_name("FERRY_LEASE_NAME", env.get("FERRY_LEASE_NAME", DEFAULT_LEASE_NAME)),
        identity=env.get("POD_NAME") or f"{socket.gethostname()}-{os.getpid()}",
        lease_s=_seconds(env, "FERRY_LEASE_DURATION_SECONDS", 15),
        renew_deadline_s=_seconds(env, "FERRY_LEASE_RENEW_DEADLINE_SECONDS", 10),
        retry_s=_seconds(env, "FERRY_LEASE_RETRY_SECONDS", 2),
    )
    if not election.retry_s < election.renew_deadline_s < election.lease_s:
        raise FerryError(
            "X_INVARIANT",
            f"the leader Lease timings retry {election.retry_s}s, renew deadline "
            f"{election.renew_deadline_s}s, lease {election.lease_s}s are not increasing: a "
            "leader could still be reconciling after a standby took its lease",
            "keep FERRY_LEASE_RETRY_SECONDS < FERRY_LEASE_RENEW_DEADLINE_SECONDS < "
            "FERRY_LEASE_DURATION_SECONDS (defaults 2 < 10 < 15)",
        )
    watched = [n.strip() for n in env.get("FERRY_WATCH_NAMESPACES", "").split(",") if n.strip()]
    return OperatorConfig(
        watch_namespaces=tuple(
            sorted({_name("FERRY_WATCH_NAMESPACES", n, _DNS_LABEL) for n in watched})
        ),
        default_secret=DatabaseRef(
            name=_name(
                "FERRY_DEFAULT_DATABASE_SECRET",
                env.get("FERRY_DEFAULT_DATABASE_SECRET", DEFAULT_SECRET_NAME),
            ),
            key=env.get("FERRY_DEFAULT_DATABASE_SECRET_KEY") or DEFAULT_SECRET_KEY,
        ),
        election=election,
        health_port=_port(env.get("FERRY_HEALTH_PORT", str(DEFAULT_HEALTH_PORT))),
        autoscale_s=_seconds(env, "FERRY_AUTOSCALE_SECONDS", DEFAULT_AUTOSCALE_SECONDS),
        log_level=_log_level(env.get("FERRY_LOG_LEVEL", "INFO")),
    )


def _name(variable: str, value: str, pattern: re.Pattern[str] = _DNS_SUBDOMAIN) -> str:
    if not pattern.fullmatch(value):
        raise FerryError(
            "X_INVARIANT",
            f'{variable} holds "{value}", which is not a Kubernetes object name',
            "use lower-case letters, digits and '-' (e.g. ferry-system)",
        )
    return value


def _seconds(env: Mapping[str, str], variable: str, default: int) -> int:
    raw = env.get(variable, str(default))
    if not raw.isdigit() or int(raw) < 1:
        raise FerryError(
            "X_INVARIANT",
            f'{variable} holds "{raw}", which is not a whole number of seconds',
            f"set it to a positive integer, or unset it for the default {default}",
        )
    return int(raw)


def _port(raw: str) -> int:
    if not raw.isdigit() or not 1024 <= int(raw) <= 65535:
        raise FerryError(
            "X_INVARIANT",
            f'FERRY_HEALTH_PORT holds "{raw}", which is not an unprivileged port',
            "set it to a port between 1024 and 65535 (default 8080)",
        )
    return int(raw)


def _log_level(raw: str) -> str:
    if raw not in ("DEBUG", "INFO", "WARNING"):
        raise FerryError(
            "X_INVARIANT",
            f'FERRY_LOG_LEVEL holds "{raw}", which is not a log level the operator knows',
            "set it to DEBUG, INFO or WARNING",
        )
    return raw
