"""Every command and role, on a database it cannot reach or a URL it cannot read: a refusal
with its code and fix, a non-zero exit, the JSON envelope under ``--json``, no traceback,
and never the password."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.processes import free_port

from .conftest import Ferry, cli_env

PASSWORD = "hunter2-s3cret"
COMMANDS = [
    ["jobs", "ls"],
    ["jobs", "show", "1"],
    ["jobs", "retry", "1"],
    ["jobs", "cancel", "1"],
    ["jobs", "stats"],
    ["queues", "pause", "mail"],
    ["queues", "resume", "mail"],
    ["migrate"],
    ["doctor"],
    ["tasks", "list"],
    ["tasks", "show", "cli.nightly"],
    ["tasks", "pause", "cli.nightly"],
    ["tasks", "resume", "cli.nightly"],
    ["worker", "--metrics-port", "0"],
    ["scheduler", "--metrics-port", "0"],
    ["relay", "--metrics-port", "0"],
    ["admin", "--insecure-dev", "--port", "0"],
    ["dev", "--insecure-dev", "--port", "0"],
    ["run", "--metrics-port", "0"],  # ROLE=worker, as the container image runs it
]
MALFORMED = [
    (f"postgresql://app:{PASSWORD}@db:notaport/app", "port"),
    (f"postgresql://app:{PASSWORD}/app", "port"),  # a forgotten "@host": the password as port
    (f"mysql://app:{PASSWORD}@db/app", "scheme"),
    (f"postgresql://app:{PASSWORD}@[::1/app", "IPv6"),
]


def _env(postgres_dsn: str, pg_schema: str, url: str) -> dict[str, str]:
    env = cli_env(postgres_dsn, pg_schema)
    env["DATABASE_URL"] = url
    env["ROLE"] = "worker"
    return env


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_an_unreachable_database_is_a_refusal_in_every_command_and_role(
    ferry: Ferry, postgres_dsn: str, pg_schema: str, command: list[str]
) -> None:
    url = f"postgresql://app:{PASSWORD}@127.0.0.1:{free_port()}/app"
    env = _env(postgres_dsn, pg_schema, url)
    result = ferry(*command, "--json", env=env)
    assert result.code == 1, result
    assert "Traceback" not in result.stderr, result.stderr
    assert PASSWORD not in result.stdout + result.stderr
    [finding] = result.envelope["findings"]
    assert finding["code"] == "X_DB_UNREACHABLE"
    assert "app:***@127.0.0.1" in finding["message"] and finding["fix"]
    assert result.envelope["ok"] is False

    text = ferry(*command, env=env)
    assert text.code == 1 and "Traceback" not in text.stderr
    # stdout carries only a result (the doctor's table of checks); the refusal is on stderr.
    assert "X_DB_UNREACHABLE" not in text.stdout and (text.stdout == "") != (command == ["doctor"])
    assert text.stderr.startswith("X_DB_UNREACHABLE: ") and "\nfix: " in text.stderr
    assert PASSWORD not in text.stdout + text.stderr


@pytest.mark.parametrize(("url", "named"), MALFORMED)
@pytest.mark.parametrize(
    "command", [["jobs", "ls"], ["migrate"], ["worker", "--metrics-port", "0"]]
)
def test_a_malformed_database_url_is_refused_without_echoing_it(
    ferry: Ferry, postgres_dsn: str, pg_schema: str, url: str, named: str, command: list[str]
) -> None:
    result = ferry(*command, "--json", env=_env(postgres_dsn, pg_schema, url))
    assert result.code == 1 and "Traceback" not in result.stderr, result.stderr
    assert PASSWORD not in result.stdout + result.stderr
    [finding] = result.envelope["findings"]
    assert finding["code"] == "X_DB_URL_INVALID"
    assert named in finding["message"] and "postgresql://" in finding["fix"]


@pytest.mark.parametrize("command", [["run", "--metrics-port", "0"], ["jobs", "ls"]], ids=" ".join)
def test_a_role_leaves_its_refusal_in_the_termination_log_and_a_command_does_not(
    ferry: Ferry, postgres_dsn: str, pg_schema: str, tmp_path: Path, command: list[str]
) -> None:
    """In a pod the kubelet copies /dev/termination-log into the container's last state:
    what the operator names on the DurableJob. Only a role (the container's process) writes
    it; a command run beside it (``kubectl exec … ferry jobs ls``) leaves it alone."""
    log = tmp_path / "termination-log"
    log.write_text("")
    url = f"postgresql://app:{PASSWORD}@127.0.0.1:{free_port()}/app"
    env = {**_env(postgres_dsn, pg_schema, url), "FERRY_TERMINATION_LOG": str(log)}
    assert ferry(*command, env=env).code == 1
    written = log.read_text()
    if command[0] != "run":
        assert written == ""
        return
    assert written.startswith("X_DB_UNREACHABLE: cannot connect to the database at "), written
    assert "\nfix: check DATABASE_URL" in written and PASSWORD not in written


def test_without_a_termination_log_nothing_is_written(
    ferry: Ferry, postgres_dsn: str, pg_schema: str, tmp_path: Path
) -> None:
    absent = tmp_path / "termination-log"
    url = f"postgresql://app:{PASSWORD}@127.0.0.1:{free_port()}/app"
    env = {**_env(postgres_dsn, pg_schema, url), "FERRY_TERMINATION_LOG": str(absent)}
    assert ferry("run", "--metrics-port", "0", env=env).code == 1
    assert not absent.exists()
