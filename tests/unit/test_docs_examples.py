"""The runnable examples of the docs run: each ``python`` block of a page that runs itself
(``asyncio.run(main())``) is executed in a fresh interpreter and prints what its comments
say it prints."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
_PRINTED = re.compile(r"print\(.*#\s*(.+)$", re.M)


def runnable(page: str) -> list[str]:
    return [b for b in _BLOCK.findall((DOCS / page).read_text()) if "asyncio.run(main())" in b]


@pytest.mark.parametrize(
    ("page", "index"), [("jobs.md", 0), ("workflows.md", 0)], ids=["jobs-results", "workflows"]
)
def test_a_docs_example_runs_and_prints_what_it_says(page: str, index: int) -> None:
    code = runnable(page)[index]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = [said.strip() for said in _PRINTED.findall(code)]
    assert done.stdout.splitlines() == expected
