-- Delete up to $2 completed or cancelled runs finished before $1 (steps cascade);
-- answers how many. SKIP LOCKED keeps two pruners from waiting on each other's batch.
WITH doomed AS (
    SELECT id
    FROM {schema}.jobs
    WHERE state IN ('completed', 'cancelled') AND finished_at_ms < $1
    ORDER BY finished_at_ms
    LIMIT $2
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM {schema}.jobs AS j USING doomed WHERE j.id = doomed.id RETURNING 1
)
SELECT count(*) FROM deleted
