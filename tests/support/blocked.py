"""Run Python in a fresh interpreter where some installed packages cannot be imported.

A finder placed first on ``sys.meta_path`` answers every import of a blocked package (or
of any module inside it) with the ``ModuleNotFoundError`` a missing package raises, so the
child sees exactly what an install without that extra would show, while everything else
imports from this environment as usual.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

_PRELUDE = """
import sys

class _Blocked:
    def __init__(self, names):
        self.names = frozenset(names)

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _Blocked(BLOCKED))
"""


def run_blocked(
    code: str, blocked: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with the packages ``blocked`` (top-level import names) unimportable."""
    program = f"BLOCKED = {list(blocked)!r}\n{_PRELUDE}\n{textwrap.dedent(code)}"
    return subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def refusal_of(code: str, blocked: Sequence[str], **kwargs: Any) -> dict[str, str]:
    """The ``FerryError`` that ``code`` raised (as ``{"code", "message", "fix"}``), run with
    ``blocked`` unimportable; ``code`` must raise one."""
    wrapped = (
        "import json\nfrom ferry.errors import FerryError\ntry:\n"
        + textwrap.indent(textwrap.dedent(code), "    ")
        + "\nexcept FerryError as refused:\n    print(json.dumps(refused.to_dict()))\n"
        + "else:\n    print('null')\n"
    )
    done = run_blocked(wrapped, blocked, **kwargs)
    assert done.returncode == 0, done.stderr
    refusal = json.loads(done.stdout.strip().splitlines()[-1])
    assert refusal is not None, f"nothing was refused: {done.stdout}"
    return dict(refusal)
