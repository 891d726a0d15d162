"""The chaos tests reuse the worker tests' app and fixtures."""

from __future__ import annotations

import sys
from pathlib import Path

# The worker tests' package is named ``worker`` (pytest's rootdir-relative naming, with
# tests/integration on the path); put that folder on the path when chaos runs alone.
_INTEGRATION = str(Path(__file__).resolve().parents[1] / "integration")
if _INTEGRATION not in sys.path:
    sys.path.insert(0, _INTEGRATION)

from worker.conftest import clock, driver  # noqa: E402

__all__ = ["clock", "driver"]
