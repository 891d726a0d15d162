"""The chart's alerts, evaluated by a real Prometheus.

``promtool`` checks the rules the chart renders and runs unit tests (alert_rules_test.yaml)
for every alert in them, with exact timing on synthetic series. A live Prometheus then
scrapes a real worker process's ``/metrics`` with the same rules loaded, and the worker is
made to lose a lease for real: its heartbeat hangs behind a row lock another transaction
holds, as in tests/integration/worker/test_heartbeat.py. ``FerryJobLeaseLost`` must fire
through Prometheus's HTTP API.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import yaml
from control_plane import REPO, Unavailable, provision
from support.processes import free_port
from support.waiting import eventually

# The job alone, not the demo app: importing the app would declare its tasks in this
# process, where later harness tests count the declared tasks.
from examples.demo.jobs import reindex_catalog
from ferry._jobs.facade import set_job_driver
from ferry.drivers import postgres_job_driver

UNIT_TESTS = Path(__file__).with_name("alert_rules_test.yaml")
FIRE_BUDGET_S = 60.0


@pytest.fixture(scope="module")
def prometheus_bin() -> Path:
    """prometheus and promtool from ``scripts/prometheus.sh``."""
    try:
        return provision("prometheus.sh", "--no-build")
    except Unavailable as missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must provision Prometheus (make test-assets): {missing}")
        pytest.skip(f"no Prometheus ({missing}); run `make test-assets`")
        raise


def chart_rules() -> dict[str, Any]:
    """The chart's PrometheusRule as ``helm template`` renders it, as a plain rule file."""
    try:
        tools = provision("kubetools.sh", "--no-fetch")
    except Unavailable as missing:
        pytest.skip(f"no helm ({missing}); run `make envtest`")
    rendered = subprocess.run(
        [
            str(tools / "helm"),
            "template",
            "ferry",
            str(REPO / "charts" / "ferry"),
            "--api-versions",
            "monitoring.coreos.com/v1",
            "--show-only",
            "templates/prometheusrule.yaml",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rule: dict[str, Any] = yaml.safe_load(rendered)
    return {"groups": rule["spec"]["groups"]}


def alert_names(rules: dict[str, Any]) -> set[str]:
    return {r["alert"] for group in rules["groups"] for r in group["rules"] if "alert" in r}


@pytest.fixture
def rule_dir(tmp_path: Path) -> Path:
    """The rendered rules and the unit tests side by side (the tests name the rule file)."""
    (tmp_path / "ferry-rules.yaml").write_text(yaml.safe_dump(chart_rules()))
    shutil.copy(UNIT_TESTS, tmp_path / UNIT_TESTS.name)
    return tmp_path


def promtool(prometheus_bin: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(prometheus_bin / "promtool"), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def test_promtool_accepts_the_rules_the_chart_renders(prometheus_bin: Path, rule_dir: Path) -> None:
    checked = promtool(prometheus_bin, "check", "rules", "ferry-rules.yaml", cwd=rule_dir)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_alert_the_chart_ships_passes_its_promtool_unit_tests(
    prometheus_bin: Path, rule_dir: Path
) -> None:
    shipped = alert_names(yaml.safe_load((rule_dir / "ferry-rules.yaml").read_text()))
    tests = yaml.safe_load(UNIT_TESTS.read_text())["tests"]
    tested = {case["alertname"] for test in tests for case in test["alert_rule_test"]}
    assert shipped == tested, f"alerts without promtool tests: {sorted(shipped - tested)}"
    ran = promtool(prometheus_bin, "test", "rules", UNIT_TESTS.name, cwd=rule_dir)
    assert ran.returncode == 0, ran.stdout + ran.stderr


class Prometheus:
    """A Prometheus process on loopback with a one-second scrape and rule evaluation."""

    def __init__(self, prometheus_bin: Path, workdir: Path, target: str) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "ferry-rules.yaml").write_text(yaml.safe_dump(chart_rules()))
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": ["ferry-rules.yaml"],
            "scrape_configs": [
                {
                    "job_name": "ferry-worker",
                    # What the ServiceMonitor's relabelling gives a pod's series in a cluster.
                    "static_configs": [{"targets": [target], "labels": {"namespace": "shop"}}],
                }
            ],
        }
        (workdir / "prometheus.yml").write_text(yaml.safe_dump(config))
        self.url = f"http://127.0.0.1:{free_port()}"
        self.log_path = workdir / "prometheus.log"
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    str(prometheus_bin / "prometheus"),
                    f"--config.file={workdir / 'prometheus.yml'}",
                    f"--storage.tsdb.path={workdir / 'data'}",
                    f"--web.listen-address={self.url.removeprefix('http://')}",
                ],
                cwd=workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    def api(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}", timeout=5) as answer:
            return json.load(answer)["data"]

    def value(self, query: str) -> float | None:
        try:
            result = self.api(f"query?query={urllib.request.quote(query)}")["result"]
        except OSError:
            return None
        return float(result[0]["value"][1]) if result else None

    def firing(self, alert: str) -> dict[str, Any] | None:
        try:
            alerts = self.api("alerts")["alerts"]
        except OSError:
            return None
        found = [a for a in alerts if a["labels"]["alertname"] == alert and a["state"] == "firing"]
        return found[0] if found else None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


@pytest.fixture
def worker_process(postgres_dsn: str, pg_schema: str, tmp_path: Path) -> Iterator[int]:
    """``ferry worker`` on the demo app with a 2 s lease; yields its metrics port."""
    port = free_port()
    log_path = tmp_path / "worker.log"
    env = {
        **os.environ,
        "DATABASE_URL": postgres_dsn,
        "FERRY_SCHEMA": pg_schema,
        "METRICS_PORT": str(port),
    }
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ferry",
                "worker",
                "--app",
                "examples.demo.app:api",
                "--lease-seconds",
                "2",
            ],
            env=env,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        yield port
    finally:
        process.kill()
        process.wait()
        print(log_path.read_text(errors="replace")[-4000:])


async def test_a_real_prometheus_fires_ferry_job_lease_lost_when_a_worker_loses_a_lease(
    prometheus_bin: Path, postgres_dsn: str, pg_schema: str, worker_process: int, tmp_path: Path
) -> None:
    """Budget: one worker, one run, one lost lease. Invariant: the chart's FerryJobLeaseLost
    rule, unchanged, fires in a real Prometheus scraping that worker."""
    prometheus = Prometheus(prometheus_bin, tmp_path / "prometheus", f"127.0.0.1:{worker_process}")
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, pool_max_size=2)
    blocker = await asyncpg.connect(postgres_dsn)
    try:
        await driver.open()
        set_job_driver(driver)
        # Scraped at 0 first: the loss is then an increase, as on a worker that just started.
        await eventually(
            lambda: prometheus.value('job_leases_lost_total{queue="default"}') == 0,
            what="Prometheus to scrape the worker's counter at 0",
            within_s=60,
            every_s=0.5,
            first_s=0.5,
        )
        run = await reindex_catalog.enqueue(
            {"catalog": "alerts", "batches": 1, "batch_seconds": 600}
        )
        job_id = int(run.job_id)
        table = f'"{pg_schema}".jobs'
        await eventually(
            lambda: _equals(
                blocker.fetchval(f"SELECT state FROM {table} WHERE id = $1", job_id), "running"
            ),
            what="the run to start",
            every_s=0.2,
        )
        transaction = blocker.transaction()
        await transaction.start()
        # The heartbeat's UPDATE now waits on this row lock, unanswered.
        await blocker.execute(f"SELECT 1 FROM {table} WHERE id = $1 FOR UPDATE", job_id)
        locked = time.monotonic()
        counted = await eventually(
            lambda: (
                prometheus.value('job_leases_lost_total{queue="default"}') == 1 and time.monotonic()
            ),
            what="the worker to count the lost lease",
            within_s=FIRE_BUDGET_S,
            every_s=0.5,
            first_s=0.5,
        )
        alert = await eventually(
            lambda: prometheus.firing("FerryJobLeaseLost"),
            what="FerryJobLeaseLost firing",
            within_s=FIRE_BUDGET_S,
            every_s=0.5,
            first_s=0.5,
        )
        fired = time.monotonic()
        await transaction.rollback()
        assert alert["labels"] == {
            "alertname": "FerryJobLeaseLost",
            "namespace": "shop",
            "queue": "default",
            "severity": "critical",
        }
        assert alert["annotations"]["runbook_url"].endswith("/lease-lost.md")
        print(
            f"measured: lock → counter=1 in Prometheus {counted - locked:.1f} s, "
            f"lock → FerryJobLeaseLost firing {fired - locked:.1f} s (lease 2 s, scrape/eval 1 s)"
        )
    finally:
        set_job_driver(None)
        await blocker.close()
        await driver.close()
        prometheus.stop()


async def _equals(value: Awaitable[object], expected: object) -> bool:
    return await value == expected
