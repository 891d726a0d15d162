"""The scheduler role: one leader by an expiring lease row, cron dispatch, catch-up.

``Scheduler`` runs rounds; ``Dispatcher`` is one round; ``LeaseLeader`` is the election;
the driver's ``scheduler`` store holds every bit of durable state.
"""

from ferry._scheduler.dispatch import Dispatcher, Fired, RoundReport, planned_fires
from ferry._scheduler.leader import DEFAULT_LEADER_TTL_MS, LeaseLeader
from ferry._scheduler.scheduler import DEFAULT_TICK_MS, Scheduler

__all__ = [
    "DEFAULT_LEADER_TTL_MS",
    "DEFAULT_TICK_MS",
    "Dispatcher",
    "Fired",
    "LeaseLeader",
    "RoundReport",
    "Scheduler",
    "planned_fires",
]
