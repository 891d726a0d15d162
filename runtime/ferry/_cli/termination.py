"""The refusal a role exits with, left where Kubernetes reads a container's last words.

The kubelet copies ``/dev/termination-log`` into the pod's status when the container ends
(``lastState.terminated.message``), so a worker that cannot reach its database reaches
``kubectl describe pod`` — and the operator, which names it on the DurableJob — as
``X_DB_UNREACHABLE: … password authentication failed …`` rather than as a restart count.
Outside a container the file does not exist and nothing is written.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ferry._operations.envelope import Outcome

TERMINATION_LOG = Path("/dev/termination-log")
"""Kubernetes' default ``terminationMessagePath``; ``FERRY_TERMINATION_LOG`` overrides it."""

MAX_BYTES = 4096
"""The kubelet keeps at most this much of the file."""


def record_refusal(outcome: Outcome) -> None:
    """Write a refused role's findings (``X_CODE: message`` and its ``fix:`` line) to the
    termination log, when there is one to write to."""
    target = Path(os.environ.get("FERRY_TERMINATION_LOG") or TERMINATION_LOG)
    if outcome.ok or not target.exists():
        return
    text = "\n".join(
        f"{finding['code']}: {finding['message']}\nfix: {finding['fix']}"
        for finding in outcome.findings
    )
    # A read-only or foreign file: the refusal's own output line remains.
    with contextlib.suppress(OSError):
        target.write_bytes(text.encode("utf-8")[:MAX_BYTES])
