"""Heavy dependencies are extras: the core imports none of them, and a feature whose extra
is not installed is refused by name (``X_EXTRA_MISSING``, the pip command in the fix)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from support.blocked import REPO, refusal_of, run_blocked

from ferry._extras import EXTRAS

EXTRA_PACKAGES = ("starlette", "uvicorn", "jinja2", "redis", "pgserver", "mcp", "aiosqlite")


def _loaded_after(statement: str) -> set[str]:
    probe = (
        f"import sys\n{statement}\nimport json\n"
        f"print(json.dumps(sorted({{m.partition('.')[0] for m in sys.modules}})))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


def test_import_ferry_loads_no_extra_package() -> None:
    loaded = _loaded_after("import ferry, ferry.drivers, ferry.tasks, ferry.errors, ferry.metrics")
    assert "ferry" in loaded
    assert loaded.isdisjoint(EXTRA_PACKAGES), loaded & set(EXTRA_PACKAGES)


def test_the_command_line_starts_without_the_dashboard_or_the_mcp_sdk() -> None:
    loaded = _loaded_after("import ferry._cli; ferry._cli.build_parser()")
    assert loaded.isdisjoint(EXTRA_PACKAGES), loaded & set(EXTRA_PACKAGES)


def test_every_extra_of_the_code_is_an_extra_of_the_distribution() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    named = {"sqlite", "redis", "dashboard", "mcp", "embedded", "otel", "uvloop"}
    named |= {"psycopg", "sqlalchemy", "django"}  # the integrations (docs/integrations.md)
    assert set(EXTRAS) <= named <= set(extras)
    core = " ".join(project["dependencies"])
    for name in ("starlette", "uvicorn", "jinja2", "redis", "pgserver", "mcp", "opentelemetry"):
        assert name not in core, f"{name} is a core dependency"
    (itself,) = [r for r in extras["dev"] if r.startswith("ferry[")]
    assert set(itself.removeprefix("ferry[").removesuffix("]").split(",")) == named, (
        "dev installs every extra"
    )


def _assert_refused(refusal: dict[str, str], extra: str, feature: str) -> None:
    assert refusal["code"] == "X_EXTRA_MISSING"
    assert f"ferry[{extra}]" in refusal["message"] and feature in refusal["message"]
    assert refusal["fix"] == f"pip install 'ferry[{extra}]'"


def _cli_refusal(args: list[str], blocked: list[str], **env: str) -> dict[str, str]:
    done = run_blocked(
        f"import sys\nfrom ferry._cli import main\nsys.exit(main({['--json', *args]!r}))",
        blocked,
        env=env,
    )
    assert done.returncode == 1, done.stderr
    # ``ferry mcp`` over stdio speaks JSON-RPC on stdout, so its envelope is on stderr.
    speaks_on_stdout = args[0] == "mcp"
    (finding,) = json.loads(done.stderr if speaks_on_stdout else done.stdout)["findings"]
    return dict(finding)


@pytest.mark.parametrize("blocked", ["starlette", "jinja2", "python_multipart"])
def test_ferry_admin_without_the_dashboard_extra_is_refused(blocked: str) -> None:
    refusal = _cli_refusal(["admin", "--insecure-dev", "--db", "memory://"], [blocked])
    _assert_refused(refusal, "dashboard", "`ferry admin`")
    assert repr(blocked) in refusal["message"]


def test_ferry_dev_without_the_dashboard_extra_is_refused() -> None:
    refusal = _cli_refusal(["dev", "--insecure-dev", "--db", "memory://"], ["uvicorn"])
    _assert_refused(refusal, "dashboard", "`ferry dev`")


def test_ferry_mcp_without_the_mcp_extra_is_refused() -> None:
    refusal = _cli_refusal(
        ["mcp", "--db", "memory://", "--token-read", "r"], ["mcp"], FERRY_MCP_TOKEN="r"
    )
    _assert_refused(refusal, "mcp", "`ferry mcp`")


def test_importing_the_public_dashboard_without_its_extra_is_refused() -> None:
    refusal = refusal_of("import ferry.admin", ["starlette"])
    _assert_refused(refusal, "dashboard", "ferry.admin")


@pytest.mark.parametrize(
    "build",
    [
        "from ferry.drivers import job_driver_from_url\njob_driver_from_url('redis://127.0.0.1:1/0')",
        "from ferry.drivers import redis_job_driver",
    ],
    ids=["url", "factory"],
)
def test_the_redis_driver_without_its_extra_is_refused(build: str) -> None:
    refusal = refusal_of(build, ["redis"])
    _assert_refused(refusal, "redis", "the Redis driver")


def test_the_embedded_postgres_without_its_extra_is_refused(tmp_path: Path) -> None:
    refusal = refusal_of(
        f"from ferry.embedded import embedded_database_url\n"
        f"embedded_database_url(__import__('pathlib').Path({str(tmp_path)!r}))",
        ["pgserver"],
    )
    _assert_refused(refusal, "embedded", "the embedded PostgreSQL")


def test_ferry_dev_without_database_url_or_the_embedded_extra_is_refused() -> None:
    refusal = _cli_refusal(
        ["dev", "--insecure-dev", "--app", "examples.demo.app:api"],
        ["pgserver"],
        DATABASE_URL="",
    )
    _assert_refused(refusal, "embedded", "the embedded PostgreSQL")


def test_joining_a_sqlite_transaction_without_aiosqlite_is_refused(tmp_path: Path) -> None:
    refusal = refusal_of(
        f"""
        import asyncio
        from pydantic import BaseModel
        from ferry import job, set_job_driver
        from ferry.drivers import sqlite_job_driver

        class Nothing(BaseModel):
            n: int

        @job(input=Nothing, idempotency_key=lambda i: str(i.n))
        async def noop(input: Nothing) -> None: ...

        async def main() -> None:
            driver = sqlite_job_driver({str(tmp_path / "jobs.db")!r})
            set_job_driver(driver)
            try:
                await noop.enqueue({{"n": 1}}, connection=object())
            finally:
                await driver.close()

        asyncio.run(main())
        """,
        ["aiosqlite"],
    )
    _assert_refused(refusal, "sqlite", "joining the caller's SQLite transaction")


@pytest.mark.parametrize("blocked", ["django", "psycopg"])
def test_the_django_integration_without_its_extra_is_refused(blocked: str) -> None:
    refusal = refusal_of("import ferry.contrib.django", [blocked])
    _assert_refused(refusal, "django", "ferry.contrib.django")
