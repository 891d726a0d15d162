"""The public surface: ``import ferry`` is cheap and exports what the docs import."""

from __future__ import annotations

import subprocess
import sys

import ferry


def test_import_ferry_loads_no_database_client() -> None:
    probe = "import sys, ferry, ferry.drivers; print('asyncpg' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_driver_factories_load_on_first_use() -> None:
    from ferry.drivers import memory_job_driver, postgres_job_driver

    assert callable(memory_job_driver) and callable(postgres_job_driver)


def test_every_exported_name_resolves() -> None:
    for name in ferry.__all__:
        assert getattr(ferry, name) is not None, name


def test_import_ferry_loads_no_framework_integration() -> None:
    """Each integration is an extra: ferry itself (its CLI, drivers, harness, dashboard)
    imports none of Django, SQLAlchemy, psycopg or FastAPI."""
    probe = (
        "import sys, ferry, ferry.drivers, ferry.testing, ferry.admin, ferry._cli; "
        "print(sorted(m for m in ('django', 'sqlalchemy', 'psycopg', 'fastapi') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
