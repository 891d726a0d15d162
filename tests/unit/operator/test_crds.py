"""The CRDs in crds/ are the one source: the chart carries byte-identical copies."""

from __future__ import annotations

from pathlib import Path

import yaml
from operator_bodies import durable_job, scheduled_task

from ferry_operator.names import OPERATOR_SET_ENV
from ferry_operator.schedule import plan_scheduler
from ferry_operator.scheduler import scheduler_deployment
from ferry_operator.worker import worker_deployment

REPO = Path(__file__).resolve().parents[3]


def test_the_charts_crds_are_the_crds_source_copied_by_make() -> None:
    source = {p.name: p.read_bytes() for p in (REPO / "crds").glob("*.yaml")}
    chart = {p.name: p.read_bytes() for p in (REPO / "charts" / "ferry" / "crds").glob("*.yaml")}
    assert source, "no CRDs in crds/"
    assert chart == source, "run `make chart-crds` after editing crds/"


def test_scheduled_tasks_print_schedule_zone_suspend_last_next_and_ready() -> None:
    crd = yaml.safe_load((REPO / "crds" / "ferry.dev_scheduledtasks.yaml").read_text())
    assert crd["spec"]["names"]["shortNames"] == ["st"]
    assert crd["spec"]["names"]["categories"] == ["ferry"]
    [version] = crd["spec"]["versions"]
    columns = [c["name"] for c in version["additionalPrinterColumns"]]
    assert columns == ["Schedule", "Zone", "Suspend", "Last Fire", "Next Fire", "Ready", "Age"]
    assert version["subresources"] == {"status": {}}


def test_the_crd_refuses_exactly_the_env_the_operator_sets() -> None:
    crd = yaml.safe_load((REPO / "crds" / "ferry.dev_durablejobs.yaml").read_text())
    env_schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"
    ]["env"]
    [rule] = env_schema["x-kubernetes-validations"]
    refused = set(yaml.safe_load(rule["rule"].split(" in ", 1)[1].rstrip(")")))
    plan = plan_scheduler([scheduled_task()], {"digest": durable_job()}, 0)
    set_by_builders = {
        item["name"]
        for deployment in (worker_deployment(durable_job()), scheduler_deployment("shop", plan))
        for item in deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert refused == set(OPERATOR_SET_ENV) == set_by_builders
