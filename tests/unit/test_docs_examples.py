"""The runnable examples of the docs run as written: each section named here holds one
```python block that is a whole program; it exits cleanly (its own asserts hold) and
prints what the comments of its ``print`` lines say it prints."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
RUNNABLE = [
    ("jobs.md", "Results"),
    ("jobs.md", "Rate limits"),
    ("jobs.md", "Idempotency"),
    ("workflows.md", None),
]
"""(page, section); ``None`` is the page's opening, before its first section."""
_PRINTED = re.compile(r"print\(.*#\s*(.+)$", re.M)


def example(page: str, section: str | None) -> str:
    text = (DOCS / page).read_text(encoding="utf-8")
    if section is None:
        body = text.split("\n## ", 1)[0]
    else:
        body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    [code] = re.findall(r"```python\n(.*?)```", body, re.S)
    return code


@pytest.mark.parametrize(("page", "section"), RUNNABLE)
def test_the_example_runs_as_written(page: str, section: str | None, tmp_path: Path) -> None:
    code = example(page, section)
    program = tmp_path / "example.py"
    program.write_text(code, encoding="utf-8")
    ran = subprocess.run(
        [sys.executable, str(program)], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == [said.strip() for said in _PRINTED.findall(code)]
