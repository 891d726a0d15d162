"""The scheduler role: one leader by an expiring lease row, cron dispatch, catch-up.

``Scheduler`` runs rounds; ``Dispatcher`` is one round; ``LeaseLeader`` is the election;
``SchedulerStore`` (Postgres or memory) holds every bit of durable state.
"""

from ferry._scheduler.dispatch import Dispatcher, Fired, RoundReport, planned_fires
from ferry._scheduler.leader import DEFAULT_LEADER_TTL_MS, LeaseLeader
from ferry._scheduler.memory_store import MemorySchedulerStore
from ferry._scheduler.postgres_store import PostgresSchedulerStore, postgres_scheduler_store
from ferry._scheduler.scheduler import DEFAULT_TICK_MS, Scheduler, run_until_signalled
from ferry._scheduler.store import LeaderLease, SchedulerStore, TaskTick

__all__ = [
    "DEFAULT_LEADER_TTL_MS",
    "DEFAULT_TICK_MS",
    "Dispatcher",
    "Fired",
    "LeaderLease",
    "LeaseLeader",
    "MemorySchedulerStore",
    "PostgresSchedulerStore",
    "RoundReport",
    "Scheduler",
    "SchedulerStore",
    "TaskTick",
    "planned_fires",
    "postgres_scheduler_store",
    "run_until_signalled",
]
