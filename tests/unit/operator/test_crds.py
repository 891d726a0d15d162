"""The CRDs in crds/ are the one source: the chart's CRD templates are rendered from them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import yaml
from operator_bodies import durable_job, scheduled_task

from ferry_operator.names import OPERATOR_SET_ENV
from ferry_operator.schedule import plan_scheduler
from ferry_operator.scheduler import scheduler_deployment
from ferry_operator.worker import worker_deployment

REPO = Path(__file__).resolve().parents[3]


def _crd(name: str) -> dict[str, Any]:
    crd: dict[str, Any] = yaml.safe_load((REPO / "crds" / f"ferry.dev_{name}.yaml").read_text())
    return crd


def _version(name: str) -> dict[str, Any]:
    [version] = _crd(name)["spec"]["versions"]
    return dict(version)


def test_the_charts_crd_templates_are_what_make_chart_crds_renders_from_crds() -> None:
    spec = importlib.util.spec_from_file_location("chart_crds", REPO / "scripts" / "chart_crds.py")
    assert spec and spec.loader
    chart_crds = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(chart_crds)
    templates = REPO / "charts" / "ferry" / "templates" / "crds"
    found = {p.name: p.read_text() for p in templates.glob("*.yaml")}
    assert found, "no CRD templates in the chart"
    assert found == chart_crds.rendered(), "run `make chart-crds` after editing crds/"
    assert not (REPO / "charts" / "ferry" / "crds").exists(), "Helm never upgrades crds/"


def test_scheduled_tasks_print_schedule_zone_suspend_last_next_ready_and_reason() -> None:
    crd = _crd("scheduledtasks")
    assert crd["spec"]["names"]["shortNames"] == ["st"]
    assert crd["spec"]["names"]["categories"] == ["ferry"]
    columns = [c["name"] for c in _version("scheduledtasks")["additionalPrinterColumns"]]
    assert columns == [
        "Schedule",
        "Zone",
        "Suspend",
        "Last Fire",
        "Next Fire",
        "Ready",
        "Reason",
        "Age",
    ]
    assert _version("scheduledtasks")["subresources"] == {"status": {}}


def test_a_durable_job_scales_through_its_scale_subresource() -> None:
    version = _version("durablejobs")
    assert version["subresources"]["scale"] == {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".status.selector",
    }
    status = version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
    assert status["replicas"]["type"] == "integer" and status["selector"]["type"] == "string"


def test_a_durable_job_needs_no_database_secret_ref() -> None:
    spec = _version("durablejobs")["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["required"] == ["image", "handler"]


def test_status_is_typed_with_kstatus_conditions_on_both_kinds() -> None:
    def preserves_unknown(node: Any) -> bool:
        if isinstance(node, dict):
            return bool(node.get("x-kubernetes-preserve-unknown-fields")) or any(
                preserves_unknown(value) for value in node.values()
            )
        return isinstance(node, list) and any(preserves_unknown(item) for item in node)

    for name in ("durablejobs", "scheduledtasks"):
        status = _version(name)["schema"]["openAPIV3Schema"]["properties"]["status"]
        assert not preserves_unknown(status), name
        assert status["properties"]["observedGeneration"]["type"] == "integer"
        conditions = status["properties"]["conditions"]
        assert conditions["x-kubernetes-list-map-keys"] == ["type"]
        item = conditions["items"]
        assert item["properties"]["type"]["enum"] == ["Ready", "Reconciling", "Stalled"]
        assert "observedGeneration" in item["properties"]
        assert set(item["required"]) == {
            "type",
            "status",
            "reason",
            "message",
            "lastTransitionTime",
        }


def test_the_crd_refuses_exactly_the_env_the_operator_sets() -> None:
    spec = _version("durablejobs")["schema"]["openAPIV3Schema"]["properties"]["spec"]
    [rule] = spec["properties"]["env"]["x-kubernetes-validations"]
    refused = set(yaml.safe_load(rule["rule"].split(" in ", 1)[1].rstrip(")")))
    plan = plan_scheduler([scheduled_task()], {"digest": durable_job()}, 0)
    set_by_builders = {
        item["name"]
        for deployment in (worker_deployment(durable_job()), scheduler_deployment("shop", plan))
        for item in deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert refused == set(OPERATOR_SET_ENV) == set_by_builders
