-- Delete up to $2 runs in states $3 finished before $1 (steps cascade); answers how many.
-- SKIP LOCKED keeps two pruners from waiting on each other's batch.
WITH doomed AS (
    SELECT id
    FROM {schema}.jobs
    WHERE state = ANY ($3::text[]) AND finished_at_ms < $1
    ORDER BY finished_at_ms
    LIMIT $2
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM {schema}.jobs AS j USING doomed WHERE j.id = doomed.id RETURNING 1
)
SELECT count(*) FROM deleted
