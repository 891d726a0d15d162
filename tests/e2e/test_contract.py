"""The runtime contract end to end: the pod specs the operator wrote, run as local processes.

Each container's command runs with the env its spec declares. Three things a pod gets from
Kubernetes are supplied locally instead: DATABASE_URL (a secretKeyRef) is the test's real
PostgreSQL, the ConfigMap volume is a directory holding the same keys, and METRICS_PORT is a
free port (each pod has its own network namespace; these processes share one). FERRY_SCHEMA
picks a fresh schema so the run sees only its own rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import asyncpg
from control_plane import REPO, ControlPlane
from e2e_helpers import minutely_digest
from support.processes import free_port
from support.waiting import eventually, eventually_blocking

from ferry.drivers import postgres_job_driver
from ferry.drivers.protocol import RunFilter

NAMESPACE = "ferry-contract"
TASK = "every-minute"
"""The ScheduledTask ``minutely_digest`` declares: the scheduler's task of that name."""
MINUTE_MS = 60_000


def _pod_spec(plane: ControlPlane, deployment: str) -> dict[str, Any]:
    found = eventually_blocking(
        lambda: plane.get("deployment", "-n", NAMESPACE, deployment), what=deployment
    )
    spec: dict[str, Any] = found["spec"]["template"]["spec"]
    return spec


class LocalPod:
    """A pod spec's one container, run as a process on this machine."""

    def __init__(self, plane: ControlPlane, pod: dict[str, Any], dsn: str, schema: str) -> None:
        [container] = pod["containers"]
        self.container = container
        self.grace_s = int(pod["terminationGracePeriodSeconds"])
        self.root = plane.workdir / f"pod-{container['name']}-{free_port()}"
        mounts = self._mount_configmaps(plane, pod)
        self.port = free_port()
        env = {
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "FERRY_SCHEMA": schema,
        }
        for item in container["env"]:
            value = item.get("value")
            if item["name"] == "DATABASE_URL":
                value = dsn
            elif item["name"] == "METRICS_PORT":
                value = str(self.port)
            for mount_path, local in mounts.items():
                if value and value.startswith(mount_path):
                    value = str(local) + value[len(mount_path) :]
            assert value is not None, f"{item['name']} has a valueFrom the test does not supply"
            env[item["name"]] = value
        self.env = env
        command = [
            shutil.which(container["command"][0], path=env["PATH"]) or "",
            *container["command"][1:],
            *container.get("args", []),
        ]
        self.log = (self.root / "out.log").open("wb")
        self.process = subprocess.Popen(
            command, env=env, cwd=REPO, stdout=self.log, stderr=subprocess.STDOUT
        )

    def _mount_configmaps(self, plane: ControlPlane, pod: dict[str, Any]) -> dict[str, Path]:
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        mounts: dict[str, Path] = {}
        for mount in self.container.get("volumeMounts", []):
            source = volumes[mount["name"]].get("configMap")
            if source is None:
                continue
            configmap = plane.get("configmap", "-n", NAMESPACE, source["name"])
            local = self.root / mount["name"]
            local.mkdir(parents=True)
            for key, text in configmap["data"].items():
                (local / key).write_text(text)
            mounts[mount["mountPath"]] = local
        self.root.mkdir(parents=True, exist_ok=True)
        return mounts

    def probe(self, kind: str = "livenessProbe") -> int:
        """GET the probe's declared path on the metrics port; the HTTP status (0: no answer)."""
        path = self.container[kind]["httpGet"]["path"]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=2) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as failed:
            return int(failed.code)
        except OSError:
            return 0

    def output(self) -> str:
        self.log.flush()
        return (self.root / "out.log").read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log.close()


async def test_the_operators_pod_specs_run_a_scheduled_job_and_drain_on_sigterm(
    control_plane: ControlPlane, operator: None, postgres_dsn: str, pg_schema: str
) -> None:
    """Budget: one scheduler + one worker process, one overdue occurrence of the minutely
    task (its last-tick row is seeded a minute back, so no wait for the wall-clock minute).
    Invariant: the job the ScheduledTask names is enqueued by the scheduler and completed
    by the worker, and the worker exits on SIGTERM within the grace period its pod spec
    declares."""
    resources = minutely_digest(
        NAMESPACE,
        image="ghcr.io/ferry-dev/ferry:0.1.0",
        dsn="postgresql://replaced.by.the.test/ferry",
        drainSeconds=5,
    )
    for resource in resources:
        control_plane.kubectl("apply", "-f", "-", stdin=json.dumps(resource))
    worker_pod = _pod_spec(control_plane, "send-digest-worker")
    scheduler_pod = _pod_spec(control_plane, "ferry-scheduler")
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema)
    await driver.open()
    now = int(time.time() * 1000)
    await _seed_overdue_occurrence(postgres_dsn, pg_schema, now - now % MINUTE_MS)
    worker = LocalPod(control_plane, worker_pod, postgres_dsn, pg_schema)
    scheduler = LocalPod(control_plane, scheduler_pod, postgres_dsn, pg_schema)
    try:
        for pod in (worker, scheduler):
            await eventually(
                lambda p=pod: p.probe() == 200 or (p.process.poll() is not None and p.output()),
                what=f"{pod.env['ROLE']} liveness 200",
                within_s=60,
                every_s=0.5,
                first_s=0.5,
            )
            assert pod.probe() == 200, pod.output()
            assert pod.probe("startupProbe") == 200
        completed = await _completed_run(driver, worker, scheduler)
        assert completed.attempts == 1
        started = time.monotonic()
        worker.process.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(worker.process.wait, worker.grace_s)
        assert code == 0, worker.output()
        assert time.monotonic() - started <= worker.grace_s
    finally:
        for pod in (worker, scheduler):
            if pod.process.poll() is None:
                pod.process.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    pod.process.wait(timeout=pod.grace_s)
            pod.stop()
        await driver.close()
        control_plane.kubectl("delete", "namespace", NAMESPACE, "--wait=false", check=False)


async def _seed_overdue_occurrence(dsn: str, schema: str, occurrence_ms: int) -> None:
    """The task's last-tick row just before ``occurrence_ms``: its first round fires it."""
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(
            f'INSERT INTO "{schema}".records (space, key, value, updated_at_ms) '
            "VALUES ('scheduler-ticks', $1, jsonb_build_array($2::bigint, null, null), 0)",
            TASK,
            occurrence_ms - 1,
        )
    finally:
        await connection.close()


async def _completed_run(driver: Any, worker: LocalPod, scheduler: LocalPod) -> Any:
    """The first send_digest run to complete."""

    async def completed() -> Any:
        for pod in (worker, scheduler):
            assert pod.process.poll() is None, pod.output()
        runs = await driver.introspect.list_runs(RunFilter(name="send_digest"))
        return next((run for run in runs if run.state == "completed"), None)

    return await eventually(
        completed,
        what="a send_digest run completing",
        within_s=90,
        every_s=0.5,
        context=lambda: f"scheduler:\n{scheduler.output()}\nworker:\n{worker.output()}",
    )
