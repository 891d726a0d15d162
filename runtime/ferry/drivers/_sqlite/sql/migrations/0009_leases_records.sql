-- One lease primitive and one record primitive instead of a table per feature, as on
-- Postgres (its migration 0009 says why). Every row of the tables they replace is kept.
CREATE TABLE ferry_leases (
    name           TEXT    PRIMARY KEY,
    holder         TEXT    NOT NULL,
    term           INTEGER NOT NULL,
    acquired_at_ms INTEGER NOT NULL,
    expires_at_ms  INTEGER NOT NULL
) STRICT;

CREATE TABLE ferry_records (
    space         TEXT    NOT NULL,
    key           TEXT    NOT NULL,
    value         TEXT    NOT NULL,
    expires_at_ms INTEGER,
    updated_at_ms INTEGER NOT NULL,
    PRIMARY KEY (space, key)
) STRICT;
CREATE INDEX ferry_records_expiry ON ferry_records (expires_at_ms)
    WHERE expires_at_ms IS NOT NULL;

CREATE TABLE ferry_record_log (
    id    INTEGER PRIMARY KEY AUTOINCREMENT,
    space TEXT    NOT NULL,
    key   TEXT    NOT NULL,
    value TEXT    NOT NULL,
    at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX ferry_record_log_tail ON ferry_record_log (space, key, id DESC);
CREATE INDEX ferry_record_log_age ON ferry_record_log (at_ms);

INSERT INTO ferry_leases (name, holder, term, acquired_at_ms, expires_at_ms)
SELECT 'scheduler', holder, 1, acquired_at_ms, expires_at_ms FROM ferry_scheduler_leader;
INSERT INTO ferry_leases (name, holder, term, acquired_at_ms, expires_at_ms)
SELECT 'maintenance', holder, 1, expires_at_ms, expires_at_ms
FROM ferry_lease_slots WHERE key = ' maintenance';
DELETE FROM ferry_lease_slots WHERE key = ' maintenance';

INSERT INTO ferry_records (space, key, value, updated_at_ms)
SELECT 'scheduler-ticks', task,
       json_array(checked_through_ms, last_occurrence_ms, last_fired_at_ms), checked_through_ms
FROM ferry_scheduler_ticks;
INSERT INTO ferry_records (space, key, value, updated_at_ms)
SELECT 'paused-tasks', task, json(paused_at_ms), paused_at_ms FROM ferry_scheduler_paused_tasks;
INSERT INTO ferry_records (space, key, value, expires_at_ms, updated_at_ms)
SELECT 'revoked-sessions', session, 'true', expires_at_ms, 0 FROM ferry_admin_revoked_sessions;
INSERT INTO ferry_records (space, key, value, updated_at_ms)
SELECT 'webhook-endpoints', endpoint_id,
       json_object('disabled_at_ms', disabled_at_ms, 'disabled_reason', disabled_reason),
       updated_at_ms
FROM ferry_webhook_endpoints WHERE disabled_at_ms IS NOT NULL;
INSERT INTO ferry_records (space, key, value, updated_at_ms)
SELECT 'backfills', key,
       json_object('cursor', json(coalesce(cursor, 'null')), 'processed', processed,
                   'pages', pages, 'done', json(CASE WHEN done THEN 'true' ELSE 'false' END),
                   'updated_at_ms', updated_at_ms),
       updated_at_ms
FROM ferry_backfills;
INSERT INTO ferry_record_log (space, key, value, at_ms)
SELECT 'webhook-attempts', endpoint_id,
       json_object('webhook', webhook, 'endpoint_id', endpoint_id, 'event_id', event_id,
                   'message_id', message_id, 'job_id', job_id, 'attempt', attempt,
                   'outcome', outcome, 'status', status, 'code', code, 'message', message,
                   'duration_ms', duration_ms, 'at_ms', at_ms),
       at_ms
FROM ferry_webhook_attempts ORDER BY id;
-- Each endpoint's old streak counter, carried over as the log's {"streak": n} marker.
INSERT INTO ferry_record_log (space, key, value, at_ms)
SELECT 'webhook-attempts', endpoint_id, json_object('streak', consecutive_failures), updated_at_ms
FROM ferry_webhook_endpoints;

DROP TABLE ferry_scheduler_leader;
DROP TABLE ferry_scheduler_ticks;
DROP TABLE ferry_scheduler_paused_tasks;
DROP TABLE ferry_admin_revoked_sessions;
DROP TABLE ferry_webhook_attempts;
DROP TABLE ferry_webhook_endpoints;
DROP TABLE ferry_backfills;
