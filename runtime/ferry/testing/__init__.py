"""Testing ferry jobs: a frozen clock, ``run_jobs``, ``drain`` and a trace.

``pytest`` picks up the plugin automatically once ferry is installed; its fixtures are
``ferry_harness`` (a ``Harness`` on the memory driver, installed as the job driver for the
test) and ``ferry_clock`` (its ``FrozenClock``).
"""

from ferry._clock import FrozenClock
from ferry.testing._harness import Harness, StepTrace, Trace

__all__ = ["FrozenClock", "Harness", "StepTrace", "Trace"]
