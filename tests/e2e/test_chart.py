"""The Helm chart against a real API server: install, CRDs, values, RBAC, dry runs, guards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from control_plane import REPO, ControlPlane
from e2e_helpers import durable_job
from support.waiting import eventually_blocking

CHART = str(REPO / "charts" / "ferry")
CRDS = ("durablejobs", "scheduledtasks")

# Every value a user might set, set: the manifests must still be valid and lint clean.
FULL_VALUES: dict[str, Any] = {
    "nameOverride": "jobs",
    "fullnameOverride": "acme-ferry",
    "image": {"repository": "registry.acme.dev/shop", "tag": "1.2.3", "pullPolicy": "Always"},
    "imagePullSecrets": [{"name": "regcred"}],
    "replicaCount": 3,
    "defaultDatabaseSecret": {"name": "shop-db", "key": "dsn"},
    "operator": {
        "logLevel": "DEBUG",
        "healthPort": 8443,
        "leaderElection": {
            "leaseDurationSeconds": 30,
            "renewDeadlineSeconds": 20,
            "retryPeriodSeconds": 4,
        },
        "autoscaling": {"intervalSeconds": 3},
    },
    "serviceAccount": {"create": True, "name": "acme-operator", "annotations": {"a": "b"}},
    "podAnnotations": {"prometheus.io/scrape": "false"},
    "podLabels": {"team": "platform"},
    "resources": {"requests": {"cpu": "100m", "memory": "160Mi"}, "limits": {"memory": "320Mi"}},
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "tolerations": [
        {"key": "dedicated", "operator": "Equal", "value": "ops", "effect": "NoSchedule"}
    ],
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["ops"]}]}
                ]
            }
        }
    },
    "priorityClassName": "system-cluster-critical",
    "podDisruptionBudget": {"enabled": True},
    "rbac": {"aggregateToDefaultRoles": True},
    "crds": {"install": True, "keep": True},
    "monitoring": {"enabled": True, "labels": {"release": "prometheus"}},
    "grafanaDashboard": {"enabled": True, "annotations": {"grafana_folder": "ferry"}},
}


def _render(plane: ControlPlane, release: str, *args: str) -> list[dict[str, Any]]:
    rendered = plane.run("helm", "template", release, CHART, "--namespace", "ferry-system", *args)
    return [doc for doc in yaml.safe_load_all(rendered) if doc]


def _values_file(plane: ControlPlane, name: str, values: dict[str, Any]) -> str:
    path = plane.workdir / f"{name}.values.yaml"
    path.write_text(yaml.safe_dump(values))
    return str(path)


def _monitoring_served(plane: ControlPlane) -> None:
    plane.kubectl("apply", "-f", str(Path(__file__).with_name("monitoring_crds.yaml")))

    def served() -> bool:
        listed = plane.kubectl("api-resources", "--api-group=monitoring.coreos.com")
        return {"prometheusrules", "servicemonitors"} <= set(listed.split())

    eventually_blocking(served, what="monitoring.coreos.com/v1 served")


def test_helm_install_registers_the_crds_with_short_names_and_category(
    control_plane: ControlPlane, ferry_release: str
) -> None:
    for crd in ("durablejobs.ferry.dev", "scheduledtasks.ferry.dev"):
        established = control_plane.kubectl(
            "get",
            "crd",
            crd,
            "-o",
            'jsonpath={.status.conditions[?(@.type=="Established")].status}',
        )
        assert established == "True"
    resources = control_plane.kubectl("api-resources", "--api-group=ferry.dev", "-o", "wide")
    assert "dj" in resources and "st" in resources and "ferry" in resources
    deployment = control_plane.get("deployment", "-n", ferry_release, "ferry-operator")
    assert deployment is not None
    assert deployment["spec"]["replicas"] == 2
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"


def test_the_installed_crds_are_the_crds_source_owned_by_the_release_and_kept(
    control_plane: ControlPlane, ferry_release: str
) -> None:
    """The chart's CRD templates install exactly crds/ (plus metadata), as Helm-managed
    objects of the release (so `helm upgrade` upgrades them) that `helm uninstall` keeps."""
    for plural in CRDS:
        source = yaml.safe_load((REPO / "crds" / f"ferry.dev_{plural}.yaml").read_text())
        served = control_plane.get("crd", f"{plural}.ferry.dev")
        assert (served["spec"]["group"], served["spec"]["scope"]) == ("ferry.dev", "Namespaced")
        names = served["spec"]["names"]
        assert names == {**names, **source["spec"]["names"]}
        [version], [wanted] = served["spec"]["versions"], source["spec"]["versions"]
        assert version["schema"] == wanted["schema"]
        assert version["subresources"] == wanted["subresources"]
        meta = served["metadata"]
        assert meta["annotations"]["meta.helm.sh/release-name"] == "ferry"
        assert meta["annotations"]["meta.helm.sh/release-namespace"] == ferry_release
        assert meta["annotations"]["helm.sh/resource-policy"] == "keep"
        assert meta["labels"]["app.kubernetes.io/managed-by"] == "Helm"


def test_the_crd_templates_follow_crds_install_and_crds_keep(control_plane: ControlPlane) -> None:
    kinds = [d["kind"] for d in _render(control_plane, "r")]
    assert kinds.count("CustomResourceDefinition") == 2
    skipped = _render(control_plane, "r", "--set", "crds.install=false")
    assert "CustomResourceDefinition" not in [d["kind"] for d in skipped]
    unkept = _render(control_plane, "r", "--set", "crds.keep=false")
    for crd in (d for d in unkept if d["kind"] == "CustomResourceDefinition"):
        assert "helm.sh/resource-policy" not in (crd["metadata"].get("annotations") or {})


@pytest.mark.parametrize(
    "values",
    [{}, FULL_VALUES, {"watchNamespaces": ["team-a", "team-b"], "crds": {"install": False}}],
    ids=["defaults", "every-value", "namespaced"],
)
def test_the_chart_lints_strictly(control_plane: ControlPlane, values: dict[str, Any]) -> None:
    linted = control_plane.run(
        "helm", "lint", "--strict", CHART, "-f", _values_file(control_plane, "lint", values)
    )
    assert "1 chart(s) linted, 0 chart(s) failed" in linted


def test_the_values_schema_refuses_unknown_and_mistyped_values(control_plane: ControlPlane) -> None:
    for bad in ("operator.replicas=2", "watchNamespaces[0]=Team_A", "replicaCount=many"):
        answer = control_plane.run("helm", "template", "r", CHART, "--set", bad, check=False)
        assert "values don't meet the specifications of the schema" in answer, (bad, answer)


def test_every_value_reaches_the_operator_deployment(control_plane: ControlPlane) -> None:
    docs = _render(control_plane, "r", "-f", _values_file(control_plane, "full", FULL_VALUES))
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    assert deployment["metadata"]["name"] == "acme-ferry-operator"
    assert deployment["spec"]["replicas"] == 3
    template = deployment["spec"]["template"]
    pod = template["spec"]
    assert template["metadata"]["annotations"] == FULL_VALUES["podAnnotations"]
    assert template["metadata"]["labels"]["team"] == "platform"
    assert template["metadata"]["labels"]["app.kubernetes.io/name"] == "jobs"
    for key in ("nodeSelector", "tolerations", "affinity", "priorityClassName", "imagePullSecrets"):
        assert pod[key] == FULL_VALUES[key], key
    assert pod["serviceAccountName"] == "acme-operator"
    [container] = pod["containers"]
    assert container["image"] == "registry.acme.dev/shop:1.2.3"
    assert container["resources"] == FULL_VALUES["resources"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["FERRY_DEFAULT_DATABASE_SECRET"] == "shop-db"
    assert env["FERRY_DEFAULT_DATABASE_SECRET_KEY"] == "dsn"
    assert env["FERRY_LEASE_NAME"] == "acme-ferry-operator"
    assert (env["FERRY_LEASE_DURATION_SECONDS"], env["FERRY_LEASE_RETRY_SECONDS"]) == ("30", "4")
    assert env["FERRY_WATCH_NAMESPACES"] == ""
    assert env["FERRY_HEALTH_PORT"] == "8443"
    assert env["FERRY_AUTOSCALE_SECONDS"] == "3"
    [budget] = [d for d in docs if d["kind"] == "PodDisruptionBudget"]
    assert budget["spec"]["maxUnavailable"] == 1
    account = next(d for d in docs if d["kind"] == "ServiceAccount")
    assert account["metadata"]["annotations"] == {"a": "b"}


def test_a_namespaced_release_has_roles_and_no_operator_cluster_role(
    control_plane: ControlPlane,
) -> None:
    docs = _render(control_plane, "r", "--set", "watchNamespaces={team-a,team-b}")
    cluster_roles = [d["metadata"]["name"] for d in docs if d["kind"] == "ClusterRole"]
    assert sorted(cluster_roles) == ["r-ferry-edit", "r-ferry-view"]  # aggregation only
    assert not [d for d in docs if d["kind"] == "ClusterRoleBinding"]
    roles = {
        (d["metadata"]["namespace"], d["metadata"]["name"]) for d in docs if d["kind"] == "Role"
    }
    assert roles == {
        ("team-a", "r-ferry-operator"),
        ("team-b", "r-ferry-operator"),
        ("ferry-system", "r-ferry-operator-leader"),
    }
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    env = {
        e["name"]: e.get("value")
        for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["FERRY_WATCH_NAMESPACES"] == "team-a,team-b"


@pytest.mark.parametrize(
    "values",
    [
        {"monitoring": {"enabled": True}},
        FULL_VALUES,
        {"watchNamespaces": ["dry-a", "dry-b"], "replicaCount": 1},
    ],
    ids=["defaults", "every-value", "namespaced"],
)
def test_every_rendered_manifest_is_accepted_by_server_side_dry_run(
    control_plane: ControlPlane, ferry_release: str, values: dict[str, Any]
) -> None:
    _monitoring_served(control_plane)
    for namespace in ("dry-a", "dry-b"):
        control_plane.kubectl("create", "namespace", namespace, check=False)
    rendered = control_plane.run(
        "helm",
        "template",
        "dry",
        CHART,
        "--namespace",
        ferry_release,
        "--api-versions",
        "monitoring.coreos.com/v1",
        "-f",
        _values_file(control_plane, "dry", values),
    )
    docs = [doc for doc in yaml.safe_load_all(rendered) if doc]
    kinds = {doc["kind"] for doc in docs}
    assert {"CustomResourceDefinition", "Deployment", "ServiceMonitor", "PrometheusRule"} <= kinds
    applied = control_plane.kubectl(
        "apply",
        "--server-side",
        "--dry-run=server",
        "--force-conflicts",  # the CRDs are the session release's: same spec, another manager
        "--field-manager=dry",
        "-f",
        "-",
        stdin=rendered,
    )
    assert applied.count("(server dry run)") == len(docs), applied


def test_monitoring_objects_are_skipped_where_the_monitoring_api_is_absent(
    control_plane: ControlPlane,
) -> None:
    rendered = control_plane.run("helm", "template", "bare", CHART)
    kinds = {doc["kind"] for doc in yaml.safe_load_all(rendered) if doc}
    assert not kinds & {"ServiceMonitor", "PrometheusRule"}


def test_the_alerts_cover_lost_leases_leaderless_schedulers_and_dead_letters(
    control_plane: ControlPlane,
) -> None:
    rendered = control_plane.run(
        "helm", "template", "alerts", CHART, "--api-versions", "monitoring.coreos.com/v1"
    )
    [rule] = [d for d in yaml.safe_load_all(rendered) if d and d["kind"] == "PrometheusRule"]
    alerts = {r["alert"]: r for group in rule["spec"]["groups"] for r in group["rules"]}
    assert set(alerts) == {"FerryJobLeaseLost", "FerrySchedulerNoLeader", "FerryDeadLetterGrowth"}
    assert "increase(job_leases_lost_total" in alerts["FerryJobLeaseLost"]["expr"]
    leaderless = alerts["FerrySchedulerNoLeader"]
    assert "max by (namespace) (job_scheduler_leader) == 0" in leaderless["expr"]
    assert leaderless["for"] == "2m"
    for alert in alerts.values():
        runbook = alert["annotations"]["runbook_url"].rsplit("/", 1)[-1]
        assert (REPO / "docs" / "ops" / "runbooks" / runbook).is_file(), runbook
    assert json.loads(json.dumps(alerts))  # plain data all the way down


def test_the_grafana_dashboard_is_an_opt_in_configmap_the_sidecar_finds(
    control_plane: ControlPlane, ferry_release: str
) -> None:
    def configmaps(*sets: str) -> list[dict[str, object]]:
        flags = [word for value in sets for word in ("--set", value)]
        rendered = control_plane.run("helm", "template", "dash", CHART, *flags)
        return [d for d in yaml.safe_load_all(rendered) if d and d["kind"] == "ConfigMap"]

    assert configmaps() == [], "off by default"
    [dashboard] = configmaps(
        "grafanaDashboard.enabled=true", "grafanaDashboard.annotations.grafana_folder=ferry"
    )
    metadata = dashboard["metadata"]
    assert metadata["labels"]["grafana_dashboard"] == "1"  # type: ignore[index]
    assert metadata["annotations"] == {"grafana_folder": "ferry"}  # type: ignore[index]
    shipped = json.loads((REPO / "charts" / "ferry" / "dashboards" / "ferry.json").read_text())
    assert json.loads(dashboard["data"]["ferry.json"]) == shipped  # type: ignore[index]
    rendered = control_plane.run(
        "helm", "template", "dash", CHART, "--namespace", ferry_release,
        "--set", "grafanaDashboard.enabled=true",
    )  # fmt: skip
    applied = control_plane.kubectl(
        "apply", "--server-side", "--dry-run=server", "--field-manager=dry", "-f", "-",
        "--force-conflicts",  # the rendered CRDs are the session release's
        stdin=rendered,
    )  # fmt: skip
    assert "configmap/dash-ferry-grafana-dashboard serverside-applied (server dry run)" in applied


@pytest.mark.parametrize(
    "extra",
    [["--set", "crds.install=false"], ["--set", "watchNamespaces={second}"]],
    ids=["cluster-wide", "namespaced"],
)
def test_a_second_release_is_refused_while_a_cluster_wide_one_runs(
    control_plane: ControlPlane, ferry_release: str, extra: list[str]
) -> None:
    control_plane.kubectl("create", "namespace", "second", check=False)
    answer = control_plane.run(
        "helm", "install", "second", CHART, "--namespace", "second", *extra, check=False
    )
    assert 'ferry already runs a cluster-wide operator: release "ferry" in namespace ' in answer
    assert f'"{ferry_release}"' in answer and "Upgrade that release instead" in answer
    assert "second" not in control_plane.run("helm", "list", "--all-namespaces", "-q")
    # The release that is there upgrades as ever.
    control_plane.run("helm", "upgrade", "ferry", CHART, "--namespace", ferry_release)


def test_edit_users_create_and_scale_durable_jobs_and_view_users_only_read(
    control_plane: ControlPlane, ferry_release: str
) -> None:
    """The built-in roles gain the ferry kinds by aggregation: a namespace `edit` user
    (impersonated) creates and scales a DurableJob; a `view` user reads it, no more."""
    namespace = "team-rbac"
    control_plane.kubectl("create", "namespace", namespace)
    for user, role in (("jane", "edit"), ("vic", "view")):
        control_plane.kubectl(
            "create",
            "rolebinding",
            user,
            f"--clusterrole={role}",
            f"--user={user}",
            "-n",
            namespace,
        )

    def aggregated() -> bool:
        rules = control_plane.get("clusterrole", "edit")["rules"]
        return any("ferry.dev" in rule.get("apiGroups", []) for rule in rules)

    eventually_blocking(aggregated, what="the ferry rules aggregated into edit")
    body = durable_job("digest", namespace)
    created = control_plane.kubectl("--as=jane", "create", "-f", "-", stdin=json.dumps(body))
    assert "durablejob.ferry.dev/digest created" in created
    scaled = control_plane.kubectl(
        "--as=jane", "scale", "dj", "digest", "--replicas=3", "-n", namespace
    )
    assert "scaled" in scaled
    assert control_plane.get("dj", "-n", namespace, "digest")["spec"]["replicas"] == 3
    assert "digest" in control_plane.kubectl("--as=vic", "get", "dj", "-n", namespace)
    refused = control_plane.kubectl(
        "--as=vic", "delete", "dj", "digest", "-n", namespace, check=False
    )
    assert "forbidden" in refused
    for verb, expected in (("create", "yes"), ("delete", "yes")):
        answer = control_plane.kubectl(
            "auth",
            "can-i",
            verb,
            "scheduledtasks.ferry.dev",
            "--as=jane",
            "-n",
            namespace,
            check=False,
        )
        assert answer.strip() == expected
    control_plane.kubectl("delete", "namespace", namespace, "--wait=false")
