"""The runnable examples of the docs run as written: each section named here holds one
```python block that is a whole program, and it exits cleanly (its own asserts hold)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
RUNNABLE = [("jobs.md", "Rate limits"), ("jobs.md", "Idempotency")]


def example(page: str, section: str) -> str:
    text = (DOCS / page).read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    [code] = re.findall(r"```python\n(.*?)```", body, re.S)
    return code


@pytest.mark.parametrize(("page", "section"), RUNNABLE)
def test_the_example_runs_as_written(page: str, section: str, tmp_path: Path) -> None:
    program = tmp_path / "example.py"
    program.write_text(example(page, section), encoding="utf-8")
    ran = subprocess.run(
        [sys.executable, str(program)], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
