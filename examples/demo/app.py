"""The demo application: hand its jobs and tasks to ferry under their export names."""

from __future__ import annotations

from examples.demo import jobs, tasks
from ferry import define_api

api = define_api(jobs=[jobs], tasks=[tasks])
