"""The Helm chart against a real API server: install, CRDs, dry runs, monitoring gating."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from control_plane import REPO, ControlPlane
from e2e_helpers import wait_for

CHART = str(REPO / "charts" / "ferry")


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
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"


def test_every_rendered_chart_manifest_is_accepted_by_server_side_dry_run(
    control_plane: ControlPlane, ferry_release: str
) -> None:
    control_plane.kubectl("apply", "-f", str(Path(__file__).with_name("monitoring_crds.yaml")))

    def served() -> bool:
        listed = control_plane.kubectl("api-resources", "--api-group=monitoring.coreos.com")
        return {"prometheusrules", "servicemonitors"} <= set(listed.split())

    wait_for("monitoring.coreos.com/v1 served", served)
    rendered = control_plane.run(
        "helm",
        "template",
        "dry",
        CHART,
        "--namespace",
        ferry_release,
        "--api-versions",
        "monitoring.coreos.com/v1",
    )
    kinds = sorted(doc["kind"] for doc in yaml.safe_load_all(rendered) if doc)
    assert kinds == sorted(
        [
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "Deployment",
            "ServiceMonitor",
            "PrometheusRule",
        ]
    )
    applied = control_plane.kubectl(
        "apply",
        "--server-side",
        "--dry-run=server",
        "--field-manager=dry",
        "-f",
        "-",
        stdin=rendered,
    )
    assert applied.count("(server dry run)") == len(kinds)
    assert "servicemonitor.monitoring.coreos.com/dry-ferry-runtime" in applied
    crds = control_plane.kubectl(
        "apply", "--server-side", "--dry-run=server", "-f", str(REPO / "charts" / "ferry" / "crds")
    )
    assert crds.count("(server dry run)") == 2


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
        stdin=rendered,
    )  # fmt: skip
    assert "configmap/dash-ferry-grafana-dashboard serverside-applied (server dry run)" in applied
