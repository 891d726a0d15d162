"""The scheduler role: one leader by an expiring lease row, cron dispatch, catch-up.

``Scheduler`` runs rounds; ``Dispatcher`` is one round; ``LeaseLeader`` is the election
(on the driver's ``leases``); ``SchedulerStore`` holds every bit of durable state (on its
``leases`` and ``records``).
"""

from ferry._leadership import LeaseLeader
from ferry._scheduler.dispatch import Dispatcher, Fired, RoundReport, planned_fires
from ferry._scheduler.scheduler import (
    DEFAULT_LEADER_TTL_MS,
    DEFAULT_TICK_MS,
    Scheduler,
    scheduler_leader,
)
from ferry._scheduler.store import SCHEDULER_LEASE, SchedulerStore, TaskTick, advanced

__all__ = [
    "DEFAULT_LEADER_TTL_MS",
    "DEFAULT_TICK_MS",
    "SCHEDULER_LEASE",
    "Dispatcher",
    "Fired",
    "LeaseLeader",
    "RoundReport",
    "Scheduler",
    "SchedulerStore",
    "TaskTick",
    "advanced",
    "planned_fires",
    "scheduler_leader",
]
