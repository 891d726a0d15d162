"""The public factories take typed keywords: mypy --strict refuses a misspelt option."""

from __future__ import annotations

from pathlib import Path

from mypy import api

REPO = Path(__file__).resolve().parents[2]

APP = """\
from ferry import job_worker
from ferry.drivers import memory_job_driver, postgres_job_driver

job_worker(concurrency=4, lease_ms=30_000, drain_seconds=5.0)
postgres_job_driver("postgresql://localhost/app", schema="jobs", pool_max_size=4)
memory_job_driver()
job_worker(concurency=4)
postgres_job_driver("postgresql://localhost/app", shema="jobs")
"""


def test_mypy_refuses_a_misspelt_option_and_accepts_the_right_ones(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(APP)
    out, _err, status = api.run(
        [
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(REPO / ".mypy_cache"),
            "--python-version",
            "3.11",
            str(app),
        ]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1
    assert [line.split(":")[1] for line in errors] == ["7", "8"], out
    assert '"concurency"' in errors[0] and '"shema"' in errors[1], out
