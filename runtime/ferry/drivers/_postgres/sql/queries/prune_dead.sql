-- Delete up to :batch dead runs finished before :before, oldest first (jobs_dead_order;
-- steps cascade, SKIP LOCKED as in prune_completed); a row per run deleted.
WITH doomed AS (
    SELECT id
    FROM {schema}.jobs
    WHERE state = 'dead' AND finished_at_ms < :before
    ORDER BY finished_at_ms
    LIMIT :batch
    FOR UPDATE SKIP LOCKED
)
DELETE FROM {schema}.jobs AS j USING doomed WHERE j.id = doomed.id RETURNING 1
