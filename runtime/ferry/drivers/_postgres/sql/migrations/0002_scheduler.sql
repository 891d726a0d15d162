-- The scheduler's durable state: who leads, how far each task has been dispatched, which
-- tasks are paused. Nothing of it lives in a scheduler process, so a restarted or a newly
-- promoted node reads exactly what its predecessor wrote. Instants are epoch ms on the
-- ferry clock, as in 0001.

-- At most one row (id = 1): the node whose unexpired row this is dispatches, every other
-- node stands by. A lease row rather than pg_try_advisory_lock: an advisory grant belongs
-- to a database session, not to the process, so no node can renew it or prove it still
-- holds one (see ferry/scheduler/leader.py).
CREATE TABLE {schema}.scheduler_leader (
    id             smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    holder         text     NOT NULL,
    acquired_at_ms bigint   NOT NULL,
    expires_at_ms  bigint   NOT NULL
);

-- One row per task the scheduler has seen. checked_through_ms only moves forward, and only
-- after the enqueue of the occurrence it passes has landed, so a crash between the two
-- re-fires that occurrence (absorbed by its occurrence-scoped key) and never skips it.
CREATE TABLE {schema}.scheduler_ticks (
    task               text   PRIMARY KEY,
    checked_through_ms bigint NOT NULL,
    last_occurrence_ms bigint,
    last_fired_at_ms   bigint
);

CREATE TABLE {schema}.scheduler_paused_tasks (
    task         text   PRIMARY KEY,
    paused_at_ms bigint NOT NULL
);

COMMENT ON TABLE {schema}.scheduler_leader IS 'The scheduler leader lease: one row, renewed every round, taken over once expired.';
COMMENT ON COLUMN {schema}.scheduler_leader.holder IS 'The scheduler node (<host>:<pid>:<random>) that dispatches while the row is unexpired.';
COMMENT ON TABLE {schema}.scheduler_ticks IS 'Last-tick state per task: occurrences at or before checked_through_ms are dispatched or deliberately passed over.';
COMMENT ON COLUMN {schema}.scheduler_ticks.last_occurrence_ms IS 'The latest occurrence dispatched (null before the first).';
COMMENT ON COLUMN {schema}.scheduler_ticks.last_fired_at_ms IS 'When the scheduler dispatched last_occurrence_ms (later than it when the fire was a catch-up).';
COMMENT ON TABLE {schema}.scheduler_paused_tasks IS 'Tasks the dispatcher passes over until resumed.';
