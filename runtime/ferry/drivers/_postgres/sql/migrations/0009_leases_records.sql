-- One lease primitive and one record primitive instead of a table per feature. The
-- scheduler's leadership and the maintenance slot are leases; tick and pause records,
-- revoked dashboard sessions, disabled webhook endpoints and backfill checkpoints are
-- records; webhook attempts are a log. Every row of the tables they replace is carried over.

-- A keyed, expiring lease. term grows with every take (never on renewal), so a write
-- fenced on (name, holder, term) lands only within one tenure. Released leases keep their
-- row (lapsed), so the next term is always greater.
CREATE TABLE {schema}.leases (
    name           text   PRIMARY KEY,
    holder         text   NOT NULL,
    term           bigint NOT NULL,
    acquired_at_ms bigint NOT NULL,
    expires_at_ms  bigint NOT NULL
);

-- One JSON value per (space, key); expired rows are deleted by prune.
CREATE TABLE {schema}.records (
    space         text   NOT NULL,
    key           text   NOT NULL,
    value         jsonb  NOT NULL,
    expires_at_ms bigint,
    updated_at_ms bigint NOT NULL,
    PRIMARY KEY (space, key)
);
CREATE INDEX records_expiry ON {schema}.records (expires_at_ms) WHERE expires_at_ms IS NOT NULL;

-- Append-only logs per (space, key), read newest first, pruned by age.
CREATE TABLE {schema}.record_log (
    id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    space text   NOT NULL,
    key   text   NOT NULL,
    value jsonb  NOT NULL,
    at_ms bigint NOT NULL
);
CREATE INDEX record_log_tail ON {schema}.record_log (space, key, id DESC);
CREATE INDEX record_log_age ON {schema}.record_log (at_ms);

INSERT INTO {schema}.leases (name, holder, term, acquired_at_ms, expires_at_ms)
SELECT 'scheduler', holder, 1, acquired_at_ms, expires_at_ms FROM {schema}.scheduler_leader;
-- The maintenance slot was a limit-1 concurrency slot; it becomes the lease of that name.
INSERT INTO {schema}.leases (name, holder, term, acquired_at_ms, expires_at_ms)
SELECT 'maintenance', holder, 1, expires_at_ms, expires_at_ms
FROM {schema}.lease_slots WHERE key = ' maintenance';
DELETE FROM {schema}.lease_slots WHERE key = ' maintenance';

INSERT INTO {schema}.records (space, key, value, updated_at_ms)
SELECT 'scheduler-ticks', task,
       jsonb_build_array(checked_through_ms, last_occurrence_ms, last_fired_at_ms),
       checked_through_ms
FROM {schema}.scheduler_ticks;
INSERT INTO {schema}.records (space, key, value, updated_at_ms)
SELECT 'paused-tasks', task, to_jsonb(paused_at_ms), paused_at_ms
FROM {schema}.scheduler_paused_tasks;
INSERT INTO {schema}.records (space, key, value, expires_at_ms, updated_at_ms)
SELECT 'revoked-sessions', session, 'true', expires_at_ms, 0
FROM {schema}.admin_revoked_sessions;
INSERT INTO {schema}.records (space, key, value, updated_at_ms)
SELECT 'webhook-endpoints', endpoint_id,
       jsonb_build_object('disabled_at_ms', disabled_at_ms, 'disabled_reason', disabled_reason),
       updated_at_ms
FROM {schema}.webhook_endpoints WHERE disabled_at_ms IS NOT NULL;
INSERT INTO {schema}.records (space, key, value, updated_at_ms)
SELECT 'backfills', key,
       jsonb_build_object('cursor', cursor, 'processed', processed, 'pages', pages,
                          'done', done, 'updated_at_ms', updated_at_ms),
       updated_at_ms
FROM {schema}.backfills;
INSERT INTO {schema}.record_log (space, key, value, at_ms)
SELECT 'webhook-attempts', endpoint_id,
       jsonb_build_object('webhook', webhook, 'endpoint_id', endpoint_id, 'event_id', event_id,
                          'message_id', message_id, 'job_id', job_id, 'attempt', attempt,
                          'outcome', outcome, 'status', status, 'code', code,
                          'message', message, 'duration_ms', duration_ms, 'at_ms', at_ms),
       at_ms
FROM {schema}.webhook_attempts ORDER BY id;
-- The old ledger counted each endpoint's streak in a column; the new one reads it off the
-- log, from the newest {"streak": n} marker on: one per endpoint carries the count over.
INSERT INTO {schema}.record_log (space, key, value, at_ms)
SELECT 'webhook-attempts', endpoint_id, jsonb_build_object('streak', consecutive_failures),
       updated_at_ms
FROM {schema}.webhook_endpoints;

DROP TABLE {schema}.scheduler_leader, {schema}.scheduler_ticks,
    {schema}.scheduler_paused_tasks, {schema}.admin_revoked_sessions,
    {schema}.webhook_attempts, {schema}.webhook_endpoints, {schema}.backfills;

COMMENT ON TABLE {schema}.leases IS 'Keyed expiring leases (scheduler, maintenance); term grows with every take.';
COMMENT ON TABLE {schema}.records IS 'Keyed JSON records by space: scheduler-ticks, paused-tasks, revoked-sessions, webhook-endpoints, backfills.';
COMMENT ON TABLE {schema}.record_log IS 'Append-only logs by space and key (webhook-attempts), pruned by at_ms.';
